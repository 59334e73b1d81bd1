// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe capture --job's HTTP: one request a connection (the daemon closes
 * each), bounded by the capture's deadline, over capture_conn.h's socket or
 * TLS; and where the daemons are: --daemon's names resolved, or a Prometheus
 * server's HTTP API asked which targets report the job.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "cmd/capture_conn.h"
#include "cmd/fleet.h"

/* Headers bigger than this are not a daemon's; a JSON answer bigger than this is not either. */
#define HEAD_MAX (64 << 10)
#define BODY_MAX (64 << 20)
/*
 * The largest trace GET /trace may hand over (curl's --max-filesize): a daemon's
 * trace is cut at its window-max-bytes, 128M by default; 1G is the most the
 * client takes (docs/daemon.md, "Job captures from the client").
 */
#define TRACE_MAX (1ll << 30)

void fleet__urlenc(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t k = 0;

	for (; *s && k + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~') {
			out[k++] = (char)c;
		} else {
			out[k++] = '%';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		}
	}
	out[k] = '\0';
}

/* Appends n bytes to a's body (read_answer holds it to BODY_MAX); 0 or -ENOMEM. */
static int grow(struct fleet_answer *a, size_t *cap, const char *buf, size_t n)
{
	if (a->len + n + 1 > *cap) {
		size_t nc = (a->len + n + 1) * 2;
		char *nb = realloc(a->body, nc);

		if (!nb)
			return -ENOMEM;
		a->body = nb;
		*cap = nc;
	}
	memcpy(a->body + a->len, buf, n);
	a->len += n;
	a->body[a->len] = '\0';
	return 0;
}

/* The status line, Content-Length (-1: none) and Location of the headers in head. */
static int parse_head(const char *head, long long *clen, struct fleet_answer *a)
{
	const char *p = strcasestr(head, "\r\nContent-Length:");
	const char *loc = strcasestr(head, "\r\nLocation:");
	int status = 0;

	*clen = p ? strtoll(p + 17, NULL, 10) : -1;
	if (loc) {
		loc += 11 + strspn(loc + 11, " \t");
		snprintf(a->location, sizeof(a->location), "%.*s", (int)strcspn(loc, "\r\n"), loc);
	}
	return sscanf(head, "HTTP/1.%*d %d", &status) == 1 ? status : 0;
}

/* A body's bytes so far (got, of clen when known) against its bound: 0 or -EFBIG. */
static int over_bound(long long got, long long clen, bool to_file)
{
	long long max = to_file ? TRACE_MAX : BODY_MAX;

	return got > max || clen > max ? -EFBIG : 0;
}

/* Reads the answer: headers, then the body to sink (a 200) or to memory. */
static int read_answer(struct capture_conn *c, int sink, struct fleet_answer *a)
{
	char buf[16384], *head = malloc(HEAD_MAX + 1);
	size_t hl = 0, cap = 0;
	long long clen = -1, got = 0;
	bool in_body = false;
	ssize_t n;
	int err = 0;

	if (!head)
		return -ENOMEM;
	while (!err && (n = capture_conn__read(c, buf, sizeof(buf))) > 0) {
		const char *p = buf;
		size_t k = (size_t)n;

		if (!in_body) {
			char *end;

			k = hl + k > HEAD_MAX ? HEAD_MAX - hl : k;
			memcpy(head + hl, buf, k);
			hl += k;
			head[hl] = '\0';
			end = strstr(head, "\r\n\r\n");
			if (!end) {
				err = hl == HEAD_MAX ? -E2BIG : 0;
				continue;
			}
			in_body = true;
			a->status = parse_head(head, &clen, a);
			p = end + 4;
			k = hl - (size_t)(end + 4 - head);
			sink = a->status == 200 ? sink : -1;
		}
		got += (long long)k;
		err = over_bound(got, clen, sink >= 0);
		if (!err && sink >= 0)
			err = write(sink, p, k) == (ssize_t)k ? 0 : -errno;
		else if (!err)
			err = grow(a, &cap, p, k);
	}
	free(head);
	if (!err && n < 0)
		err = (int)n;
	if (!err && (!in_body || !a->status))
		err = -EPROTO;
	if (!err && clen >= 0 && got != clen)
		err = -EPIPE;
	if (!err && !a->body && sink < 0)
		err = grow(a, &cap, "", 0);
	return err;
}

/* What went wrong with an answer, for a message. */
static const char *http_why(int err, bool to_file)
{
	switch (err) {
	case -ETIMEDOUT:
		return "no answer within --timeout (is it stopped?)";
	case -EIO:
		return "the connection failed (was the daemon killed?)";
	case -EPIPE:
		return "the answer was cut short";
	case -EPROTO:
		return "no HTTP answer (is a cuprobe daemon listening there?)";
	case -E2BIG:
		return "its headers are over 64 KiB (is a cuprobe daemon listening there?)";
	case -EFBIG:
		return to_file ? "the trace is over 1 GiB, the most cuprobe capture fetches "
				 "(keep the daemon's window-max-bytes at 1G or less)" :
				 "its answer is over 64 MiB, far more than a daemon's (is a "
				 "cuprobe daemon listening there?)";
	default:
		return strerror(-err);
	}
}

int fleet__http(const struct capture_opts *o, const struct fleet_daemon *d, const char *auth,
		const char *method, const char *target, uint64_t deadline_ns, int sink,
		struct fleet_answer *a)
{
	const struct capture_conn_opts co = { .ap = &d->ap, .addr = d->addr, .tls = d->tls,
					      .cacert = o->cacert, .cert = o->cert, .key = o->key,
					      .name = d->name[0] ? d->name : NULL,
					      .deadline_ns = deadline_ns };
	struct capture_conn *c;
	char *req = NULL;
	int n, err;

	memset(a, 0, sizeof(*a));
	c = capture_conn__open(&co, a->err, sizeof(a->err));
	if (!c)
		return -EHOSTUNREACH;
	/* The credentials go only where capture__scheme() said they may. */
	n = asprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: 0\r\nConnection: "
		     "close\r\n\r\n", method, target, d->name[0] ? d->name : d->addr,
		     d->creds ? auth : "");
	err = n < 0 ? -ENOMEM : capture_conn__write(c, req, (size_t)n);
	if (n > 0)
		explicit_bzero(req, (size_t)n);
	free(req);
	if (!err)
		err = read_answer(c, sink, a);
	capture_conn__close(c);
	if (err) {
		/* Part of an answer is none: its status would pass for the whole. */
		a->status = 0;
		snprintf(a->err, sizeof(a->err), "%s %.*s: %s", method,
			 (int)strcspn(target, "?"), target, http_why(err, sink >= 0));
	}
	return err;
}

void fleet__said(const struct fleet_answer *a, char *out, size_t len)
{
	size_t n = a->body ? strcspn(a->body, "\n") : 0;

	if (!a->status)
		snprintf(out, len, "%s", a->err);
	else if (a->status / 100 == 3)
		snprintf(out, len, "HTTP %d, a redirect to %.200s: not followed (give that address "
			 "itself, with its scheme)", a->status, a->location[0] ? a->location : "nowhere");
	else if (n)
		snprintf(out, len, "HTTP %d: %.*s", a->status, (int)(n > 400 ? 400 : n), a->body);
	else
		snprintf(out, len, "HTTP %d, with no message", a->status);
}

/* HOST:PORT or [HOST]:PORT split; 0 or -EINVAL. */
static int split_host(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(s, ':');
	const char *h = s, *he = colon;

	if (!colon || !colon[1] || strlen(colon + 1) >= plen)
		return -EINVAL;
	if (*s == '[') {
		he = strchr(s, ']');
		if (!he || he + 1 != colon)
			return -EINVAL;
		h = s + 1;
	}
	if (he <= h || (size_t)(he - h) >= hlen)
		return -EINVAL;
	memcpy(host, h, (size_t)(he - h));
	host[he - h] = '\0';
	snprintf(port, plen, "%s", colon + 1);
	return 0;
}

/* Appends d unless an equal address is there already. */
static int push(struct fleet_daemon **v, size_t *n, const struct fleet_daemon *d)
{
	struct fleet_daemon *nv;

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].ap.salen == d->ap.salen && !memcmp(&(*v)[i].ap.sa, &d->ap.sa, d->ap.salen))
			return 0;
	nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[(*n)++] = *d;
	return 0;
}

/*
 * One ADDR ([http[s]://]HOST:PORT): each of the host's addresses a daemon, its
 * scheme and credentials as capture__scheme() says for an address from where.
 */
static int resolve(const struct capture_opts *o, const char *arg, enum capture_from from,
		   struct fleet_daemon **v, size_t *n, char *err, size_t len)
{
	const struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	const char *s = capture__no_scheme(arg);
	struct capture_scheme sch;
	char host[256], port[16];
	struct addrinfo *res = NULL;
	int rc;

	if (split_host(s, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, len, "--daemon: '%s' is not [https://]HOST:PORT", arg);
		return -EINVAL;
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, len, "--daemon: %s: %s", host, gai_strerror(rc));
		return -ENOENT;
	}
	for (struct addrinfo *ai = res; ai && !rc; ai = ai->ai_next) {
		struct fleet_daemon d = { 0 };
		void *ip = ai->ai_family == AF_INET6 ?
			   (void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr :
			   (void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		memcpy(&d.ap.sa, ai->ai_addr, ai->ai_addrlen);
		d.ap.salen = ai->ai_addrlen;
		inet_ntop(ai->ai_family, ip, d.ap.host, sizeof(d.ap.host));
		d.ap.port = (uint16_t)atoi(port);
		snprintf(d.addr, sizeof(d.addr), ai->ai_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
			 d.ap.host, port);
		if (strcmp(host, d.ap.host))
			snprintf(d.name, sizeof(d.name), "%s", host);
		rc = capture__scheme(o, arg, from, &d.ap, &sch, err, len);
		d.tls = sch.tls;
		d.creds = sch.creds;
		rc = rc ?: push(v, n, &d);
	}
	freeaddrinfo(res);
	return rc;
}

/* The PromQL string literal of s: quotes and backslashes escaped. */
static void promql_str(const char *s, char *out, size_t len)
{
	size_t k = 0;

	for (; *s && k + 3 < len; s++) {
		if (*s == '"' || *s == '\\')
			out[k++] = '\\';
		out[k++] = *s;
	}
	out[k] = '\0';
}

/* The instances of data.result[] in a Prometheus answer, each resolved as a daemon. */
static int instances(const struct capture_opts *o, const char *body, struct fleet_daemon **v,
		     size_t *n, char *err, size_t len)
{
	json_error_t je;
	json_t *j = json_loads(body, 0, &je), *res;
	size_t i;
	json_t *r;
	int rc = 0;

	res = json_object_get(json_object_get(j, "data"), "result");
	if (!json_is_array(res)) {
		snprintf(err, len, "--prometheus %s: not a Prometheus query answer (%s)", o->prometheus,
			 j ? "no data.result" : je.text);
		json_decref(j);
		return -EPROTO;
	}
	json_array_foreach(res, i, r) {
		const char *inst = json_string_value(json_object_get(json_object_get(r, "metric"),
								     "instance"));
		if (inst && !rc)
			rc = resolve(o, inst, CAPTURE_FROM_LABEL, v, n, err, len);
	}
	json_decref(j);
	return rc;
}

/* --prometheus: which targets report the job (job, or exported_job without honor_labels). */
static int from_prometheus(const struct capture_opts *o, uint64_t deadline_ns,
			   struct fleet_daemon **v, size_t *n, char *err, size_t len)
{
	const char *hp = o->prometheus + 7, *slash = strchr(hp, '/');
	struct fleet_daemon *pv = NULL;
	size_t pn = 0, plen;
	char hostport[300], q[1024], job[300], enc[3200], target[4096];
	struct fleet_answer a;
	int rc;

	snprintf(hostport, sizeof(hostport), "%.*s", slash ? (int)(slash - hp) : (int)strlen(hp),
		 hp);
	rc = resolve(o, hostport, CAPTURE_FROM_PROMETHEUS, &pv, &pn, err, len);
	if (rc || !pn) {
		free(pv);
		return rc ? rc : -ENOENT;
	}
	promql_str(o->job, job, sizeof(job));
	snprintf(q, sizeof(q), "count by (instance) (cuprobe_target_info{exported_job=\"%s\"}) or "
		 "count by (instance) (cuprobe_target_info{job=\"%s\"})", job, job);
	fleet__urlenc(q, enc, sizeof(enc));
	/* The server's path prefix (a reverse proxy's), without its trailing slash. */
	plen = slash ? strlen(slash) : 0;
	while (plen && slash[plen - 1] == '/')
		plen--;
	snprintf(target, sizeof(target), "%.*s/api/v1/query?query=%s", (int)plen,
		 slash ? slash : "", enc);
	rc = fleet__http(o, &pv[0], "", "GET", target, deadline_ns, -1, &a);
	free(pv);
	if (!rc && a.status != 200) {
		fleet__said(&a, a.err, sizeof(a.err));
		rc = -EPROTO;
	}
	if (rc)
		snprintf(err, len, "--prometheus %s: %s", o->prometheus, a.err);
	else
		rc = instances(o, a.body, v, n, err, len);
	free(a.body);
	return rc;
}

int fleet__find(const struct capture_opts *o, uint64_t deadline_ns, struct fleet_daemon **v,
		size_t *n, char *err, size_t len)
{
	char *list, *save = NULL;
	int rc = 0;

	*v = NULL;
	*n = 0;
	if (o->prometheus)
		return from_prometheus(o, deadline_ns, v, n, err, len);
	list = strdup(o->daemons);
	if (!list)
		return -ENOMEM;
	for (char *s = strtok_r(list, ",", &save); s && !rc; s = strtok_r(NULL, ",", &save))
		rc = resolve(o, s, CAPTURE_FROM_USER, v, n, err, len);
	free(list);
	return rc;
}
