// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe capture: asks a running daemon for the next N steps of a process
 * (POST /capture) and prints its answer, the trace's folder. Plain HTTP/1.1
 * on a socket, so that it needs no library and works from the static build.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "daemon_cmd.h"

static const char usage_text[] =
	"usage: cuprobe capture --daemon ADDR:PORT --pid PID --steps N [--mode bpf|cupti]\n"
	"\n"
	"Records the next N steps of PID (after the daemon's warmup) through a running\n"
	"cuprobe daemon and prints where the trace went (JSON). Exits 0 once written.\n"
	"\n"
	"  -d, --daemon ADDR:PORT   the daemon's --listen (default 127.0.0.1:9464)\n"
	"  -p, --pid PID            a CUDA process the daemon samples\n"
	"  -n, --steps N            active steps to record (1 to 10000)\n"
	"  -m, --mode MODE          bpf or cupti (default: the daemon's choice)\n"
	"\n"
	"Example:\n"
	"  cuprobe capture --daemon 127.0.0.1:9464 --pid 4242 --steps 5\n";

/*
 * Numeric addresses only (and "localhost"), like the daemon's --listen: no
 * resolver, so that the static build needs no glibc NSS at run time.
 */
static int connect_to(const char *addr)
{
	const char *colon = strrchr(addr, ':');
	struct sockaddr_storage ss = {};
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	char host[128], *end;
	long port = colon ? strtol(colon + 1, &end, 10) : 0;
	int fd, rc;

	if (!colon || colon == addr || (size_t)(colon - addr) >= sizeof(host) || !colon[1] || *end ||
	    port < 1 || port > 65535) {
		fprintf(stderr, "cuprobe capture: --daemon '%s' is not ADDR:PORT (e.g. "
			"127.0.0.1:9464)\n", addr);
		return -EINVAL;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
	} else {
		fprintf(stderr, "cuprobe capture: --daemon '%s': '%s' is not a numeric address\n",
			addr, host);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&ss, sizeof(ss)))
		return fd;
	rc = -errno;
	if (fd >= 0)
		close(fd);
	fprintf(stderr, "cuprobe capture: cannot reach the daemon at %s: %s (is cuprobe daemon "
		"running, with this --listen?)\n", addr, strerror(-rc));
	return rc;
}

/* Sends the request and reads the whole answer (the daemon closes the connection). */
static char *exchange(int fd, const char *req)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf || write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	return buf;
}

/*
 * A capture's answer is one JSON object naming the trace; anything else (a
 * proxy's page, another server on the port) is not taken for one. 0 or -EINVAL.
 */
static int check_answer(const char *addr, const char *body)
{
	static const char *const keys[] = { "pid", "dir", "trace", "result" };
	json_error_t jerr;
	json_t *j = json_loads(body, JSON_REJECT_DUPLICATES, &jerr);
	int rc = 0;

	if (!j || !json_is_object(j)) {
		fprintf(stderr, "cuprobe capture: the daemon at %s answered 200, but not with a JSON "
			"object (%s%.60s): is a cuprobe daemon listening there?\n", addr,
			j ? "" : jerr.text, j ? "not an object" : "");
		json_decref(j);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && !rc; i++) {
		json_t *v = json_object_get(j, keys[i]);

		if (!v || (i == 0 ? !json_is_integer(v) : !json_is_string(v))) {
			fprintf(stderr, "cuprobe capture: the daemon at %s answered 200, but its JSON "
				"lacks \"%s\" (%s): is the daemon a different cuprobe version?\n",
				addr, keys[i], i == 0 ? "an integer" : "a string");
			rc = -EINVAL;
		}
	}
	json_decref(j);
	return rc;
}

int capture_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "daemon", required_argument, NULL, 'd' }, { "pid", required_argument, NULL, 'p' },
		{ "steps", required_argument, NULL, 'n' }, { "mode", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' }, {},
	};
	const char *addr = "127.0.0.1:9464", *pid = NULL, *steps = NULL, *mode = NULL, *body;
	char req[512], *ans;
	int opt, fd, status = 0;

	while ((opt = getopt_long(argc, argv, "d:p:n:m:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': addr = optarg; break;
		case 'p': pid = optarg; break;
		case 'n': steps = optarg; break;
		case 'm': mode = optarg; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: return 2;
		}
	}
	if (!pid || !steps || strspn(pid, "0123456789") != strlen(pid) ||
	    strspn(steps, "0123456789") != strlen(steps) || (mode && strspn(mode, "abcdefghijklmnopqrstuvwxyz") != strlen(mode))) {
		fprintf(stderr, "cuprobe capture: give --pid PID and --steps N as numbers "
			"(cuprobe capture --help)\n");
		return 2;
	}
	fd = connect_to(addr);
	if (fd < 0)
		return 1;
	snprintf(req, sizeof(req), "POST /capture?pid=%s&steps=%s%s%s HTTP/1.1\r\nHost: %s\r\n"
		 "Content-Length: 0\r\nConnection: close\r\n\r\n", pid, steps, mode ? "&mode=" : "",
		 mode ? mode : "", addr);
	ans = exchange(fd, req);
	close(fd);
	if (!ans || sscanf(ans, "HTTP/1.%*d %d", &status) != 1) {
		fprintf(stderr, "cuprobe capture: no answer from the daemon at %s\n", addr);
		free(ans);
		return 1;
	}
	body = strstr(ans, "\r\n\r\n");
	body = body ? body + 4 : "";
	if (status == 200 && check_answer(addr, body)) {
		free(ans);
		return 1;
	}
	fputs(body, status == 200 ? stdout : stderr);
	free(ans);
	return status == 200 ? 0 : 1;
}
