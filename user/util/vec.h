/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One growable array of fixed-size elements. The struct is open so that it
 * can be embedded in other structs and its elements sorted and indexed in
 * place (vec_at); only the vec__* functions change its fields.
 */
#ifndef UTIL_VEC_H
#define UTIL_VEC_H

#include <stddef.h>

struct vec {
	void *data;
	size_t len;	  /* elements in use */
	size_t cap;	  /* elements allocated */
	size_t elem_size; /* bytes per element */
};

/* An empty vector of elements of the given type, ready for use. */
#define VEC_INIT(type) ((struct vec){ .elem_size = sizeof(type) })

/* A pointer to element i, as type. */
#define vec_at(v, type, i) (&((type *)(v)->data)[i])

void vec__init(struct vec *v, size_t elem_size);
/* Makes room for n more elements. 0 or -ENOMEM. */
int vec__reserve(struct vec *v, size_t n);
/* A new zeroed element at the end; NULL and errno ENOMEM when out of memory. */
void *vec__push(struct vec *v);
/* Copies n elements to the end. 0 or -ENOMEM. */
int vec__append(struct vec *v, const void *elems, size_t n);
/* Keeps the first len elements (len <= v->len). */
void vec__truncate(struct vec *v, size_t len);
/* Sorts the elements with qsort's cmp. */
void vec__sort(struct vec *v, int (*cmp)(const void *, const void *));
/*
 * In n elements of size sorted by cmp (key first, element second), the first
 * that does not compare below key: an index from 0 to n.
 */
size_t lower_bound(const void *base, size_t n, size_t size, const void *key,
		   int (*cmp)(const void *key, const void *elem));
/* Frees the elements; the vector stays usable, empty. */
void vec__free(struct vec *v);

#endif /* UTIL_VEC_H */
