// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe report on traces in torch.profiler's layout, read a value at a
 * time (report/scan.c): escapes, nesting, key order, white space, files cut
 * short and files that are not JSON, each checked against the exact report
 * or error, and a table of documents that must be taken when, and only
 * when, jansson takes the whole file.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "cmd/commands.h"

extern unsigned long report_scanned_files;

/* Traces are written with ' for " to keep them readable here. */
#define LAUNCH(name, kernel, corr, ts)                                                          \
	"{'ph':'X','cat':'cuda_runtime','name':'" name "','pid':5,'tid':6,'ts':" ts            \
	",'dur':1.0,'args':{'kernel':'" kernel "','correlation':" #corr "}}"
#define GPU(name, corr, ts, dur)                                                                \
	"{'ph':'X','cat':'kernel','name':'" name "','pid':0,'tid':7,'ts':" ts ",'dur':" dur      \
	",'args':{'device':0,'correlation':" #corr "}}"

#define CSV_HEAD                                                                                \
	"section,name,pid,tid,count,share_pct,per_s,step,cycle,first_step,last_step,wall_ns,"   \
	"partial,late_launches,probe_hits,probe_cost_ns,probe_cost_share,cupti_overhead_ns,"    \
	"gpu_total_ns,gpu_mean_ns,gpu_p50_ns,gpu_p99_ns,delay_mean_ns,delay_p50_ns,"            \
	"delay_p99_ns,gpu_busy_ns\n"

static char dir[] = "/tmp/test_report_scan.XXXXXX";

struct run {
	int rc;
	char *out, *err;
};

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r"), *mem;
	int c;

	assert_non_null(f);
	mem = open_memstream(&buf, &len);
	while ((c = fgetc(f)) != EOF)
		fputc(c, mem);
	fclose(mem);
	fclose(f);
	return buf;
}

/* Writes len bytes of text to dir/name, every ' as "; the path, in path. */
static void write_file(const char *name, const char *text, size_t len, char *path)
{
	FILE *f;

	snprintf(path, PATH_MAX, "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < len; i++)
		fputc(text[i] == '\'' ? '"' : text[i], f);
	assert_int_equal(fclose(f), 0);
}

static int redirect(int fd, const char *path)
{
	int saved = dup(fd), tmp = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	dup2(tmp, fd);
	close(tmp);
	return saved;
}

/* cuprobe report --format csv on the trace text (len bytes), as the file dir/name. */
static struct run report_n(const char *name, const char *text, size_t len)
{
	char path[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
	char *argv[] = { "report", "--format", "csv", path, NULL };
	int out_fd, err_fd;
	struct run r;

	write_file(name, text, len, path);
	snprintf(out, sizeof(out), "%s/.stdout", dir);
	snprintf(err, sizeof(err), "%s/.stderr", dir);
	fflush(stdout);
	fflush(stderr);
	out_fd = redirect(STDOUT_FILENO, out);
	err_fd = redirect(STDERR_FILENO, err);
	r.rc = report_main(4, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(out_fd, STDOUT_FILENO);
	dup2(err_fd, STDERR_FILENO);
	close(out_fd);
	close(err_fd);
	r.out = slurp(out);
	r.err = slurp(err);
	unlink(path);
	return r;
}

static struct run report(const char *name, const char *text)
{
	return report_n(name, text, strlen(text));
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* The trace is read a value at a time and gives exactly csv (after the header). */
static void check_csv(const char *name, const char *text, const char *csv)
{
	unsigned long before = report_scanned_files;
	struct run r = report(name, text);

	if (r.rc)
		fail_msg("%s: exit %d: %s", name, r.rc, r.err);
	assert_string_equal(r.err, "");
	assert_int_equal(report_scanned_files, before + 1);
	assert_int_equal(strncmp(r.out, CSV_HEAD, strlen(CSV_HEAD)), 0);
	assert_string_equal(r.out + strlen(CSV_HEAD), csv);
	run_free(&r);
}

/* The report fails with exactly this message about dir/name. */
static void check_error(const char *name, const char *text, size_t len, const char *msg)
{
	char want[PATH_MAX + 512];
	struct run r = report_n(name, text, len);

	snprintf(want, sizeof(want), "cuprobe report: %s/%s: %s\n", dir, name, msg);
	assert_int_equal(r.rc, 1);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, want);
	run_free(&r);
}

static void test_escapes(void **state)
{
	(void)state;
	/* Quotes, backslashes, \u escapes (a surrogate pair too) and brackets in strings. */
	check_csv("esc.pt.trace.json",
		  "{'traceEvents':[" LAUNCH("cudaLaunchKernel", "k\\'q\\\\x", 1, "1.5") ","
		  LAUNCH("cudaLaunchKernel", "\\u00e9t\\u00E9 \\ud83d\\ude00 \\/", 2, "2.5") ","
		  GPU("g\\n]}{[,:\\t", 1, "3.0", "4.25") "]}",
		  "kernel,\"k\"\"q\\x\",,,1,50.000,173913.043,,,,,,,,,,,,,,,,,,,\n"
		  "kernel,été 😀 /,,,1,50.000,173913.043,,,,,,,,,,,,,,,,,,,\n"
		  "api,cudaLaunchKernel,,,2,100.000,347826.087,,,,,,,,,,,,,,,,,,,\n"
		  "thread,,5,6,2,100.000,347826.087,,,,,,,,,,,,,,,,,,,\n"
		  "gpu_kernel,\"g\n]}{[,:\t\",,,1,,,,,,,,,,,,,,4250,4250.000,4250,4250,"
		  "1500.000,1500,1500,\n");
}

#define ONE_LAUNCH                                                                              \
	"kernel,k,,,1,100.000,1000000.000,,,,,,,,,,,,,,,,,,,\n"                                 \
	"api,cudaLaunchKernel,,,1,100.000,1000000.000,,,,,,,,,,,,,,,,,,,\n"                     \
	"thread,,5,6,1,100.000,1000000.000,,,,,,,,,,,,,,,,,,,\n"

static void test_nesting(void **state)
{
	(void)state;
	/*
	 * Args nested in arrays and objects, brackets in their strings, and a
	 * traceEvents inside another key, which holds no top-level events.
	 */
	check_csv("nest.pt.trace.json",
		  "{'x':{'traceEvents':[" LAUNCH("cudaLaunchKernel", "hidden", 1, "1.0") "]},"
		  "'traceEvents':[{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel',"
		  "'pid':5,'tid':6,'ts':1.0,'dur':1.0,'args':{'kernel':'k','in':[[1,[2,[]]],"
		  "{'a':{'b':[{'c':']'}]}},'}'],'correlation':3}}],"
		  "'y':[[[{'z':[1,{'w':'['}]}]]]}",
		  ONE_LAUNCH);
}

#define META "'cuprobe':{'pid':5,'cycle':3,'duration_ns':2000000,'command':'train'}"
#define EVENTS "'traceEvents':[" LAUNCH("cudaLaunchKernel", "k", 1, "1.0") "]"
#define OTHERS                                                                                  \
	"'schemaVersion':1,'deviceProperties':[{'id':0,'name':'H200'}],"                        \
	"'distributedInfo':{'backend':'nccl','rank':0},'baseTimeNanoseconds':1743465600000000000"

#define CYCLE_CSV                                                                               \
	"kernel,k,,,1,100.000,500.000,,,,,,,,,,,,,,,,,,,\n"                                     \
	"api,cudaLaunchKernel,,,1,100.000,500.000,,,,,,,,,,,,,,,,,,,\n"                         \
	"thread,,5,6,1,100.000,500.000,,,,,,,,,,,,,,,,,,,\n"                                    \
	"cycle,train,5,,1,100.000,500.000,,3,,,2000000,false,0,,,,,,,,,,,,\n"

static void test_key_order(void **state)
{
	(void)state;
	/* traceEvents first, last, or between the keys, the cuprobe object before or after it. */
	check_csv("first.pt.trace.json", "{" EVENTS "," OTHERS "," META "}", CYCLE_CSV);
	check_csv("last.pt.trace.json", "{" OTHERS "," META "," EVENTS "}", CYCLE_CSV);
	check_csv("middle.pt.trace.json", "{" OTHERS "," EVENTS "," META ",'traceName':'x'}",
		  CYCLE_CSV);
	/* Of two equal keys the last counts, as jansson keeps it: the first events are dropped. */
	check_csv("twice.pt.trace.json",
		  "{'traceEvents':[" LAUNCH("cudaLaunchKernel", "gone", 1, "1.0") ",5]," OTHERS
		  "," EVENTS ",'cuprobe':{'pid':9,'cycle':8}," META "}",
		  CYCLE_CSV);
	check_error("notarray.pt.trace.json", "{" EVENTS "," META ",'traceEvents':{}}",
		    strlen("{" EVENTS "," META ",'traceEvents':{}}"),
		    "not a trace (no traceEvents array): pass a *.pt.trace.json file written by "
		    "cuprobe record");
	/* A key written with escapes is the same key. */
	check_csv("esckey.pt.trace.json",
		  "{'trace\\u0045vents':[" LAUNCH("cudaLaunchKernel", "k", 1, "1.0") "]}",
		  ONE_LAUNCH);
}

/* text with ws before it and after each of {}[],: outside strings (which hold no ' here). */
static char *spread(const char *text, const char *ws)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool in_string = false;

	fputs(ws, f);
	for (const char *p = text; *p; p++) {
		fputc(*p, f);
		if (*p == '\'')
			in_string = !in_string;
		else if (!in_string && strchr("{}[],:", *p))
			fputs(ws, f);
	}
	fclose(f);
	return buf;
}

static void test_white_space(void **state)
{
	const char *trace = "{" OTHERS "," EVENTS "," META "}";
	const char *spaces[] = { " ", "\n", "\r\n", "\t", " \n\t\r  \n" };
	char *text;

	(void)state;
	check_csv("compact.pt.trace.json", trace, CYCLE_CSV);
	/* One long line, or one token a line: the same report. */
	for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++) {
		text = spread(trace, spaces[i]);
		check_csv("spread.pt.trace.json", text, CYCLE_CSV);
		free(text);
	}
}

/* Every cut of a trace fails, naming the file and the byte where it ends. */
static void test_cut_short(void **state)
{
	const char *trace = "{" OTHERS "," EVENTS "," META "}";
	char msg[256];
	int line = 1;

	(void)state;
	for (size_t len = 0; len < strlen(trace); len++) {
		snprintf(msg, sizeof(msg),
			 "not valid JSON at line %d, column %zu, byte %zu (%s): pass a trace file "
			 "written by cuprobe record",
			 line, len, len,
			 len ? "the file ends inside the trace: it was cut short"
			     : "'[' or '{' expected near end of file");
		check_error("cut.pt.trace.json", trace, len, msg);
	}
	/* Cut after lines: the line and column of the end. */
	check_error("lines.pt.trace.json", "{\n 'traceEvents': [\n  {'ph': 'X'", 30,
		    "not valid JSON at line 3, column 10, byte 30 (the file ends inside the trace: "
		    "it was cut short): pass a trace file written by cuprobe record");
	/* In a string that holds an escaped quote. */
	check_error("str.pt.trace.json", "{'traceEvents':[{'name':'a\\'b", 29,
		    "not valid JSON at line 1, column 29, byte 29 (the file ends inside the trace: "
		    "it was cut short): pass a trace file written by cuprobe record");
}

/* Not JSON: where it stops being JSON, by line, column and byte, and jansson's reason. */
static void test_not_json(void **state)
{
	const char *bad_event = "{\n 'traceEvents': [\n  {'ph': 'X',, 'cat': 'kernel'}\n ]\n}\n";
	const char *no_comma = "{\n 'traceEvents': [\n  {},\n  {}\n  {}\n ]\n}\n";
	const char *after = "{'traceEvents':[]} {}";

	(void)state;
	check_error("event.pt.trace.json", bad_event, strlen(bad_event),
		    "not valid JSON at line 3, column 14, byte 33 (string or '}' expected near "
		    "','): pass a trace file written by cuprobe record");
	check_error("comma.pt.trace.json", no_comma, strlen(no_comma),
		    "not valid JSON at line 5, column 3, byte 33 (',' or ']' expected): pass a "
		    "trace file written by cuprobe record");
	check_error("after.pt.trace.json", after, strlen(after),
		    "not valid JSON at line 1, column 20, byte 19 (end of file expected): pass a "
		    "trace file written by cuprobe record");
	/* Compressed traces are not read, as before. */
	check_error("x.pt.trace.json.gz", "\x1f\x8b\x08", 3,
		    "compressed traces are not read: gunzip it first");
}

/* "{'traceEvents':[" then levels times open, inner, levels times close, "]}". */
static char *nested(int levels, char open, const char *inner, char close)
{
	const char *head = "{'traceEvents':[", *tail = "]}";
	char *s = malloc(strlen(head) + 2 * levels + strlen(inner) + strlen(tail) + 1), *p = s;

	assert_non_null(s);
	p = stpcpy(p, head);
	memset(p, open, levels);
	p = stpcpy(p + levels, inner);
	memset(p, close, levels);
	strcpy(p + levels, tail);
	return s;
}

/* What jansson makes of the whole document: whether it is a trace the report takes. */
static bool jansson_takes(const char *doc, size_t len)
{
	char *text = strndup(doc, len);
	json_error_t jerr;
	json_t *root;
	bool ok;

	assert_non_null(text);
	for (char *p = text; *p; p++)
		*p = *p == '\'' ? '"' : *p;
	root = json_loadb(text, len, 0, &jerr);
	ok = json_is_array(json_object_get(root, "traceEvents"));
	json_decref(root);
	free(text);
	return ok;
}

static void check_like_jansson(const char *doc, size_t len)
{
	unsigned long before = report_scanned_files;
	struct run r = report_n("doc.pt.trace.json", doc, len);
	bool takes = jansson_takes(doc, len);

	if ((r.rc == 0) != takes)
		fail_msg("%.80s...: jansson %s it whole, the report exits %d: %s", doc,
			 takes ? "takes" : "refuses", r.rc, r.err);
	assert_int_equal(r.rc, takes ? 0 : 1);
	assert_int_equal(report_scanned_files, before + takes); /* a value at a time */
	run_free(&r);
}

/* A document is taken when jansson takes it whole, and only then. */
static void test_as_jansson(void **state)
{
#define DOC(s) { s, sizeof(s) - 1 } /* NUL bytes too */
	static const struct {
		const char *s;
		size_t len;
	} docs[] = {
		DOC("{'traceEvents':[]}"),
		DOC("{}"),
		DOC("[]"),
		DOC("[{'traceEvents':[]}]"),
		DOC("{'traceEvents':[1,-2.5e3,true,false,null,'s',[],{}]}"),
		DOC("{'traceEvents':[1 2]}"),
		DOC("{'traceEvents':[1,]}"),
		DOC("{'traceEvents':[],}"),
		DOC("{'traceEvents':[]}x"),
		DOC("{'traceEvents':[]}{}"),
		DOC("{'traceEvents':[]}\n\t "),
		DOC("{'traceEvents' []}"),
		DOC("{1:2,'traceEvents':[]}"),
		DOC("{'traceEvents':[{'a':[1}]}"),
		DOC("{'traceEvents':[{'a':1}}]}"),
		DOC("{'traceEvents':[01]}"),
		DOC("{'traceEvents':[1.]}"),
		DOC("{'traceEvents':[tru]}"),
		DOC("{'traceEvents':[123456789012345678901234567890]}"),
		DOC("{'traceEvents':[1e999]}"),
		DOC("{'traceEvents':['a\\u0000b']}"),
		DOC("{'a\\u0000':1,'traceEvents':[]}"),
		DOC("{'traceEvents':['\\ud800']}"),
		DOC("{'traceEvents':['\\x']}"),
		DOC("{'traceEvents':['\x01']}"),
		DOC("{'traceEvents':['\xff']}"),
		DOC("{'\xc3\xa9':'\xe2\x82','traceEvents':[]}"),
		DOC("\xef\xbb\xbf{'traceEvents':[]}"),
		DOC("{'traceEvents':[]}\x00"),
		DOC("{'traceEvents':[],'traceEvents':5}"),
		DOC("{'traceEvents':5,'traceEvents':[]}"),
		DOC("{'x':[[[[1,2],{'y':[]}]]],'traceEvents':[]}"),
		DOC("{'x':[1,2,],'traceEvents':[]}"),
		DOC("{'x':'traceEvents','traceEvents':[]}"),
		DOC("5"),
		DOC("'x'"),
		DOC(""),
	};
	const struct {
		int levels;
		char open, close;
		const char *inner;
	} deep[] = {
		{ 2045, '[', ']', "" },	    { 2046, '[', ']', "" },	   { 2047, '[', ']', "" },
		{ 2045, '[', ']', "1" },    { 2046, '[', ']', "1" },	   { 2044, '[', ']', "{}" },
		{ 2045, '[', ']', "{}" },   { 2045, '[', ']', "{'a':1}" }, { 2044, '[', ']', "{'a':1}" },
		{ 2045, '[', ']', "'s'" },  { 2046, '[', ']', "'s'" },
	};
	char *doc;

	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		check_like_jansson(docs[i].s, docs[i].len);
	for (size_t i = 0; i < sizeof(deep) / sizeof(deep[0]); i++) {
		doc = nested(deep[i].levels, deep[i].open, deep[i].inner, deep[i].close);
		check_like_jansson(doc, strlen(doc));
		free(doc);
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),	   cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_key_order),  cmocka_unit_test(test_white_space),
		cmocka_unit_test(test_cut_short),  cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_as_jansson),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
