// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent.h"
#include "core/gpu/agent_records.h"
#include "core/gpu/correlate.h"
#include "core/gpu/gpu_store.h"
#include "core/graphs/graph_store.h"
#include "core/proc/symbols.h"
#include "cuda/launch_api.h"
#include "trace/writer.h"
#include "util/vec.h"

/* A launch's API record may start this long after the uprobe saw its entry. */
#define ENTRY_TOLERANCE_NS (50 * 1000ull)

struct name {
	char *s;	/* mangled, as CUPTI gives it, assembled from pieces */
	char *demangled;
	uint32_t total, have;
};

struct gpu_store {
	struct vec api, kernel, memcpy, memset;
	struct name *names;	/* by id */
	size_t nnames;
	uint64_t dropped, overhead_ns, bad_chunks;
	uint64_t chunks;
	uint64_t flushed_at;
	char error[CUPROBE_AGENT_ERROR_MAX + 64];
	bool error_new;
};

struct gpu_store *gpu_store__new(void)
{
	struct gpu_store *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->api = VEC_INIT(struct agent_api);
	g->kernel = VEC_INIT(struct agent_kernel);
	g->memcpy = VEC_INIT(struct agent_memcpy);
	g->memset = VEC_INIT(struct agent_memset);
	return g;
}

void gpu_store__free(struct gpu_store *g)
{
	if (!g)
		return;
	vec__free(&g->api);
	vec__free(&g->kernel);
	vec__free(&g->memcpy);
	vec__free(&g->memset);
	for (size_t i = 0; i < g->nnames; i++) {
		free(g->names[i].s);
		free(g->names[i].demangled);
	}
	free(g->names);
	free(g);
}

static int add_string(struct gpu_store *g, const struct agent_string *s, const char *bytes)
{
	struct name *n;

	if (s->id >= g->nnames) {
		size_t cap = s->id + 64;
		struct name *v = realloc(g->names, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + g->nnames, 0, (cap - g->nnames) * sizeof(*v));
		g->names = v;
		g->nnames = cap;
	}
	n = &g->names[s->id];
	if (s->offset == 0) {
		free(n->s);
		free(n->demangled);
		n->demangled = NULL;
		n->s = calloc(1, s->total_len + 1);
		n->total = s->total_len;
		n->have = 0;
		if (!n->s)
			return -ENOMEM;
	}
	/* The decoder checked offset + len <= total_len against the first piece's total. */
	if (!n->s || s->total_len != n->total || s->offset != n->have)
		return -EINVAL;
	memcpy(n->s + s->offset, bytes, s->len);
	n->have += s->len;
	return 0;
}

/* Only the APIs cuprobe probes can be launches: the rest CUPTI records too. */
static bool probed_api(const struct agent_api *a)
{
	for (int i = 0; i < API__COUNT; i++)
		if (launch_apis[i].cbid == (int)a->cbid &&
		    launch_api_is_driver(i) == (a->domain == AGENT_API_DRIVER))
			return true;
	return false;
}

/* What a CUPTI refusal most likely means, for the user who reads it. */
static const char *error_hint(const struct agent_error *e)
{
	if (e->code == 39) /* CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED */
		return "another profiler (Kineto, Nsight Systems) holds CUPTI in this process";
	if (e->stage == AGENT_STAGE_VERSION)
		return "this CUPTI does not match the agent's CUDA version";
	return "no usable GPU, or a driver that does not match this CUPTI";
}

static int on_record(const struct agent_record *r, void *ctx)
{
	struct gpu_store *g = ctx;

	switch (r->type) {
	case AGENT_REC_API:
		return probed_api(&r->api) ? vec__append(&g->api, &r->api, 1) : 0;
	case AGENT_REC_KERNEL:
		return vec__append(&g->kernel, &r->kernel, 1);
	case AGENT_REC_MEMCPY:
		return vec__append(&g->memcpy, &r->memcpy, 1);
	case AGENT_REC_MEMSET:
		return vec__append(&g->memset, &r->memset, 1);
	case AGENT_REC_OVERHEAD:
		if (r->overhead.end_ns > r->overhead.start_ns)
			g->overhead_ns += r->overhead.end_ns - r->overhead.start_ns;
		return 0;
	case AGENT_REC_DROPPED:
		g->dropped += r->dropped.count;
		return 0;
	case AGENT_REC_STRING:
		return add_string(g, &r->string, r->bytes);
	case AGENT_REC_ERROR:
		snprintf(g->error, sizeof(g->error), "CUPTI error %u: %.*s (%s)", r->error.code,
			 (int)r->bytes_len, r->bytes, error_hint(&r->error));
		g->error_new = true;
		return 0;
	case AGENT_REC_FLUSHED:
		g->flushed_at = r->flushed.ts_ns;
		g->dropped += r->flushed.no_listener;
		return 0;
	default:
		return 0; /* STARTED, and types of a newer agent */
	}
}

int gpu_store__add_chunk(struct gpu_store *g, const void *data, size_t len)
{
	int err = agent_records__decode(data, len, on_record, g);

	g->chunks++;
	if (err == -EINVAL)
		g->bad_chunks++;
	return err;
}

uint64_t gpu_store__chunks(const struct gpu_store *g)
{
	return g->chunks;
}

uint64_t gpu_store__flushed_at(const struct gpu_store *g)
{
	return g->flushed_at;
}

const char *gpu_store__take_error(struct gpu_store *g)
{
	if (!g->error_new)
		return NULL;
	g->error_new = false;
	return g->error;
}

/* CUPTI's name for a kernel, demangled; NULL when it did not come whole. */
static const char *cupti_name(struct gpu_store *g, uint32_t id)
{
	struct name *n = id < g->nnames ? &g->names[id] : NULL;

	if (!n || !n->s || n->have != n->total)
		return NULL;
	if (!n->demangled)
		n->demangled = symbols__demangle(n->s);
	return n->demangled ? n->demangled : n->s;
}

static const char *kernel_name(struct gpu_store *g, uint32_t id)
{
	const char *name = cupti_name(g, id);

	return name ? name : "[unnamed kernel]";
}

/* GPU records sorted by correlation id, to find a launch's work fast. */
struct gpu_ref {
	uint32_t correlation;
	uint8_t kind;	/* 0 kernel, 1 memcpy, 2 memset */
	uint32_t idx;
	uint64_t start;
};

static int cmp_ref(const void *pa, const void *pb)
{
	const struct gpu_ref *a = pa, *b = pb;

	return (a->correlation > b->correlation) - (a->correlation < b->correlation);
}

static struct gpu_ref *index_gpu(struct gpu_store *g, size_t *n)
{
	size_t total = g->kernel.len + g->memcpy.len + g->memset.len, k = 0;
	struct gpu_ref *r = malloc((total ? total : 1) * sizeof(*r));

	if (!r)
		return NULL;
	for (size_t i = 0; i < g->kernel.len; i++) {
		const struct agent_kernel *x = vec_at(&g->kernel, struct agent_kernel, i);

		r[k++] = (struct gpu_ref){ x->correlation, 0, i, x->start_ns };
	}
	for (size_t i = 0; i < g->memcpy.len; i++) {
		const struct agent_memcpy *x = vec_at(&g->memcpy, struct agent_memcpy, i);

		r[k++] = (struct gpu_ref){ x->correlation, 1, i, x->start_ns };
	}
	for (size_t i = 0; i < g->memset.len; i++) {
		const struct agent_memset *x = vec_at(&g->memset, struct agent_memset, i);

		r[k++] = (struct gpu_ref){ x->correlation, 2, i, x->start_ns };
	}
	if (k)
		qsort(r, k, sizeof(*r), cmp_ref);
	*n = k;
	return r;
}

static int cmp_key_ref(const void *key, const void *elem)
{
	uint32_t k = *(const uint32_t *)key, c = ((const struct gpu_ref *)elem)->correlation;

	return (k > c) - (k < c);
}

/* The first GPU record of a correlation id, or NULL. */
static struct gpu_ref *first_ref(struct gpu_ref *r, size_t n, uint32_t correlation)
{
	size_t i = lower_bound(r, n, sizeof(*r), &correlation, cmp_key_ref);

	return i < n && r[i].correlation == correlation ? &r[i] : NULL;
}

static void write_gpu(struct gpu_store *g, struct trace *t, const struct gpu_ref *ref, bool flow)
{
	switch (ref->kind) {
	case 0: {
		const struct agent_kernel *k = vec_at(&g->kernel, struct agent_kernel, ref->idx);

		trace__kernel(t, k, kernel_name(g, k->name_id));
		if (flow)
			trace__flow(t, false, k->device, k->stream, k->start_ns, k->correlation);
		break;
	}
	case 1: {
		const struct agent_memcpy *m = vec_at(&g->memcpy, struct agent_memcpy, ref->idx);

		trace__memcpy(t, m);
		if (flow)
			trace__flow(t, false, m->device, m->stream, m->start_ns, m->correlation);
		break;
	}
	default: {
		const struct agent_memset *m = vec_at(&g->memset, struct agent_memset, ref->idx);

		trace__memset(t, m);
		if (flow)
			trace__flow(t, false, m->device, m->stream, m->start_ns, m->correlation);
		break;
	}
	}
}

/* The cycle's API records: those that began in [t0 - tolerance, t1]. */
static struct corr_api *window_api(struct gpu_store *g, uint64_t t0, uint64_t t1, size_t *n)
{
	struct corr_api *a = malloc((g->api.len ? g->api.len : 1) * sizeof(*a));
	size_t k = 0;

	if (!a)
		return NULL;
	for (size_t i = 0; i < g->api.len; i++) {
		const struct agent_api *r = vec_at(&g->api, struct agent_api, i);

		if (r->start_ns + ENTRY_TOLERANCE_NS < t0 || r->start_ns > t1)
			continue;
		a[k++] = (struct corr_api){ .tid = r->tid, .cbid = r->cbid,
					    .driver = r->domain == AGENT_API_DRIVER,
					    .correlation = r->correlation, .start = r->start_ns,
					    .end = r->end_ns };
	}
	*n = k;
	return a;
}

static struct corr_launch *launch_keys(const struct gpu_launch *l, size_t n)
{
	struct corr_launch *c = malloc((n ? n : 1) * sizeof(*c));

	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++)
		c[i] = (struct corr_launch){ .tid = l[i].e.tid, .cbid = launch_apis[l[i].e.api].cbid,
					     .driver = launch_api_is_driver(l[i].e.api),
					     .ts = l[i].e.ts_ns, .idx = i };
	return c;
}

/* Matches launches to API records: correlations[i] is launch i's CUPTI id, 0 when none. */
static int match(struct gpu_store *g, const struct gpu_launch *l, size_t n, uint64_t t0,
		 uint64_t t1, uint32_t *correlations, struct corr_stats *cs)
{
	struct corr_launch *c = launch_keys(l, n);
	size_t na = 0;
	struct corr_api *a = window_api(g, t0, t1, &na);
	int err = -ENOMEM;

	if (c && a)
		err = correlate(c, n, a, na, ENTRY_TOLERANCE_NS, cs);
	for (size_t i = 0; !err && i < n; i++)
		correlations[c[i].idx] = c[i].correlation;
	free(c);
	free(a);
	return err;
}

bool gpu_store__complete(struct gpu_store *g, struct gpu_launch *l, size_t n)
{
	uint32_t *corr = malloc((n ? n : 1) * sizeof(*corr));
	struct gpu_ref *refs = NULL;
	struct corr_stats cs;
	size_t nrefs = 0;
	bool done = false;

	if (!corr)
		return false;
	if (n && match(g, l, n, l[0].e.ts_ns, UINT64_MAX, corr, &cs))
		goto out;
	refs = index_gpu(g, &nrefs);
	if (!refs)
		goto out;
	done = true;
	for (size_t i = 0; i < n && done; i++)
		done = corr[i] && first_ref(refs, nrefs, corr[i]);
out:
	free(refs);
	free(corr);
	return done;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Drops the records of vec that keep[] does not mark. */
static void sweep(struct vec *v, const uint8_t *keep)
{
	size_t k = 0;

	for (size_t i = 0; i < v->len; i++)
		if (keep[i])
			memmove((char *)v->data + k++ * v->elem_size,
				(char *)v->data + i * v->elem_size, v->elem_size);
	vec__truncate(v, k);
}

/*
 * Lets go of what the cycle is done with: API records that began by t1, and
 * the GPU work whose API record is gone with them (this cycle's or older).
 */
static int prune(struct gpu_store *g, const struct gpu_ref *refs, size_t nrefs, uint64_t t1)
{
	uint32_t *live = malloc((g->api.len ? g->api.len : 1) * sizeof(*live));
	uint8_t *keep[3];
	struct vec *vs[] = { &g->kernel, &g->memcpy, &g->memset };
	size_t k = 0;
	int err = -ENOMEM;

	for (int v = 0; v < 3; v++)
		keep[v] = calloc(vs[v]->len ? vs[v]->len : 1, 1);
	if (!live || !keep[0] || !keep[1] || !keep[2])
		goto out;
	for (size_t i = 0; i < g->api.len; i++) {
		struct agent_api *a = vec_at(&g->api, struct agent_api, i);

		if (a->start_ns > t1) {
			live[k] = a->correlation;
			*vec_at(&g->api, struct agent_api, k++) = *a;
		}
	}
	vec__truncate(&g->api, k);
	if (k)
		qsort(live, k, sizeof(*live), cmp_u32);
	for (size_t i = 0; i < nrefs; i++)
		keep[refs[i].kind][refs[i].idx] =
			k && bsearch(&refs[i].correlation, live, k, sizeof(*live), cmp_u32);
	for (int v = 0; v < 3; v++)
		sweep(vs[v], keep[v]);
	err = 0;
out:
	for (int v = 0; v < 3; v++)
		free(keep[v]);
	free(live);
	return err;
}

int gpu_store__join(struct gpu_store *g, struct gpu_launch *l, size_t n, uint64_t t0, uint64_t t1,
		    struct trace *t, struct gpu_join_stats *st)
{
	uint32_t *corr = malloc((n ? n : 1) * sizeof(*corr));
	struct gpu_ref *refs = NULL;
	struct corr_stats cs;
	size_t nrefs = 0;
	uint8_t *written = NULL;
	uint64_t replay_kernels;
	int err = -ENOMEM;

	memset(st, 0, sizeof(*st));
	if (!corr)
		goto out;
	err = match(g, l, n, t0, t1, corr, &cs);
	if (err)
		goto out;
	err = -ENOMEM;
	refs = index_gpu(g, &nrefs);
	written = calloc(nrefs ? nrefs : 1, 1);
	if (!refs || !written)
		goto out;
	st->matched = cs.matched;
	st->unmatched_launches = cs.unmatched_launches;
	for (size_t i = 0; i < n; i++) {
		/* cuprobe's own ids stay clear of CUPTI's 32-bit ones. */
		uint64_t id = corr[i] ? corr[i] : l[i].own_correlation + (1ull << 32);
		struct gpu_ref *r = corr[i] ? first_ref(refs, nrefs, corr[i]) : NULL;

		const char *kernel = l[i].kernel, *named;

		/*
		 * A kernel nothing named (a handle made before cuprobe attached, a
		 * stub in a stripped object) takes CUPTI's name.
		 */
		if (r && r->kind == 0 && l[i].unnamed &&
		    (named = cupti_name(g, vec_at(&g->kernel, struct agent_kernel, r->idx)->name_id))) {
			kernel = named;
			st->named_by_cupti++;
		}
		trace__launch(t, &l[i].e, kernel, id, l[i].graph);
		if (!r) {
			st->without_gpu += corr[i] != 0;
			continue;
		}
		trace__flow(t, true, l[i].e.tgid, l[i].e.tid, l[i].e.ts_ns, id);
		replay_kernels = 0;
		for (; r < refs + nrefs && r->correlation == corr[i]; r++) {
			st->clock_faults += r->start && r->start < l[i].e.ts_ns;
			written[r - refs] = 1;
			write_gpu(g, t, r, true);
			st->gpu_records++;
			replay_kernels += r->kind == 0;
		}
		/* A replay's kernels all carry its launch's correlation: checked against its content. */
		if (launch_api_what(l[i].e.api) == LAUNCH_GRAPH) {
			st->graph_gpu_kernels += replay_kernels;
			st->graph_mismatches += l[i].graph && replay_kernels != l[i].graph->kernels;
		}
	}
	/* GPU work of the window that no probed launch made (a cudaMemcpy, say): shown, counted. */
	for (size_t i = 0; i < nrefs; i++) {
		if (written[i] || refs[i].start < t0 || refs[i].start > t1)
			continue;
		write_gpu(g, t, &refs[i], false);
		st->gpu_without_launch++;
		st->gpu_records++;
	}
	st->dropped = g->dropped;
	st->bad_chunks = g->bad_chunks;
	st->overhead_ns = g->overhead_ns;
	g->dropped = g->overhead_ns = g->bad_chunks = 0;
	err = prune(g, refs, nrefs, t1);
out:
	free(written);
	free(refs);
	free(corr);
	return err;
}
