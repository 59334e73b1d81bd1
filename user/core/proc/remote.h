/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Small reads of another process: where an object file's symbol lies in its
 * memory (through /proc/PID/maps), and the bytes there. Used to wake the
 * agent (agent_wake.c) and to bring it into a running process (inject.c).
 */
#ifndef CORE_PROC_REMOTE_H
#define CORE_PROC_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The value (st_value) and type of the defined symbol name in the ELF file
 * at path, from .dynsym and then .symtab. 0 or -errno (-ENOENT: none).
 */
int remote_elf_symbol(const char *path, const char *name, uint64_t *value, int *type);
/*
 * Where the symbol's value of the file at path lies in pid's memory: the
 * file is found in /proc/PID/maps by device and inode (or, for overlay file
 * systems, by inode and name), and value becomes an address through the
 * file's loadable segments. 0 or -errno (-ENOENT: the file is not mapped).
 */
int remote_symbol_addr(pid_t pid, const char *path, uint64_t value, uint64_t *addr);
/* process_vm_readv of len bytes at addr. 0 or -errno (-EIO: short). */
int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif /* CORE_PROC_REMOTE_H */
