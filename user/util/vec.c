// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"

#define VEC_MIN_CAP 16

void vec__init(struct vec *v, size_t elem_size)
{
	memset(v, 0, sizeof(*v));
	v->elem_size = elem_size;
}

int vec__reserve(struct vec *v, size_t n)
{
	size_t cap = v->cap ? v->cap : VEC_MIN_CAP;
	void *data;

	if (n > SIZE_MAX - v->len)
		return -ENOMEM;
	if (v->len + n <= v->cap)
		return 0;
	while (cap < v->len + n) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	if (v->elem_size && cap > SIZE_MAX / v->elem_size)
		return -ENOMEM;
	data = realloc(v->data, cap * v->elem_size);
	if (!data)
		return -ENOMEM;
	v->data = data;
	v->cap = cap;
	return 0;
}

void *vec__push(struct vec *v)
{
	void *elem;

	if (vec__reserve(v, 1)) {
		errno = ENOMEM;
		return NULL;
	}
	elem = (char *)v->data + v->len++ * v->elem_size;
	memset(elem, 0, v->elem_size);
	return elem;
}

int vec__append(struct vec *v, const void *elems, size_t n)
{
	int err;

	if (!n)
		return 0;
	err = vec__reserve(v, n);
	if (err)
		return err;
	memcpy((char *)v->data + v->len * v->elem_size, elems, n * v->elem_size);
	v->len += n;
	return 0;
}

void vec__truncate(struct vec *v, size_t len)
{
	if (len < v->len)
		v->len = len;
}

void vec__sort(struct vec *v, int (*cmp)(const void *, const void *))
{
	/* qsort with a NULL base is undefined, even for no elements. */
	if (v->len > 1)
		qsort(v->data, v->len, v->elem_size, cmp);
}

void vec__free(struct vec *v)
{
	free(v->data);
	v->data = NULL;
	v->len = 0;
	v->cap = 0;
}

size_t lower_bound(const void *base, size_t n, size_t size, const void *key,
		   int (*cmp)(const void *key, const void *elem))
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp(key, (const char *)base + mid * size) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
