// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * compare.html: one self-contained page (no script, no network): the plots
 * are SVG drawn here, so that any browser, offline, shows them as they are.
 * Each mode has one colour throughout (compare_mode_colour).
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "compare/compare_model.h"

#define PLOT_W 720
#define PLOT_H 300
#define MARGIN_L 70
#define MARGIN_B 40
#define TOP_KERNELS 10

static const char *const mode_colours[MODE__COUNT] = {
	[MODE_OFF] = "#1f77b4", [MODE_BPF] = "#ff7f0e", [MODE_CUPTI] = "#d62728",
	[MODE_LATENCY] = "#2ca02c",
};

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void head(FILE *f, const struct compare *c)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>cuprobe compare</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}\n"
	      "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;"
	      "padding:3px 8px;text-align:right}th{background:#f0f0f0}td.n{text-align:left}\n"
	      ".notes{background:#fff6d5;border:1px solid #e0c060;padding:8px 16px}\n"
	      "svg{background:#fff;border:1px solid #ddd}text{font-size:12px}\n"
	      ".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px}\n"
	      "</style></head><body>\n<h1>cuprobe compare</h1>\n<p>", f);
	if (c->cfg.cmd) {
		fputs("Command: <code>", f);
		for (char **a = c->cfg.cmd; *a; a++) {
			esc(f, *a);
			if (a[1])
				fputc(' ', f);
		}
		fputs("</code>", f);
	} else {
		fputs("Processes:", f);
		for (size_t i = 0; i < c->cfg.npids; i++)
			fprintf(f, " %d", (int)c->cfg.pids[i]);
	}
	fprintf(f, "<br>%zu modes &times; %u rounds &times; %u %s per window; step: ",
		c->cfg.nmodes, c->cfg.rounds, c->cfg.steps_per_mode,
		c->cfg.step ? "steps" : "time slices");
	esc(f, c->cfg.step ? c->cfg.step : "none (time slices)");
	fputs("<br>Order:", f);
	for (size_t i = 0; i < c->norder; i++)
		fprintf(f, " %s", compare_mode_name(c->order[i]));
	fputs("</p>\n<p class=\"key\">", f);
	for (size_t i = 0; i < c->cfg.nmodes; i++)
		fprintf(f, "<span style=\"background:%s\"></span>%s", mode_colours[c->cfg.modes[i]],
			compare_mode_name(c->cfg.modes[i]));
	fputs("</p>\n", f);
}

static void notes(FILE *f, const struct compare *c)
{
	if (!c->notes.len)
		return;
	fputs("<div class=\"notes\" id=\"notes\"><h3>What could not be measured</h3><ul>\n", f);
	for (size_t i = 0; i < c->notes.len; i++) {
		fputs("<li>", f);
		esc(f, *vec_at(&c->notes, char *, i));
		fputs("</li>\n", f);
	}
	fputs("</ul></div>\n", f);
}

/* The y range of the measured steps, in ms, a little wider than they are. */
static void step_range(const struct compare *c, bool all, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t i = 0; i < c->steps.len; i++) {
		const struct compare_step *s = vec_at(&c->steps, struct compare_step, i);
		double v = (double)s->dur_ns / 1e6;

		if (s->partial || (!all && s->mode < 0))
			continue;
		*lo = v < *lo ? v : *lo;
		*hi = v > *hi ? v : *hi;
	}
	if (!isfinite(*lo)) {
		*lo = 0;
		*hi = 1;
	}
	double pad = (*hi - *lo) * 0.08 + 1e-3;
	*lo = *lo - pad < 0 ? 0 : *lo - pad;
	*hi += pad;
}

static double y_of(double v, double lo, double hi)
{
	return (PLOT_H - MARGIN_B) - (v - lo) / (hi - lo) * (PLOT_H - MARGIN_B - 10);
}

static void y_axis(FILE *f, double lo, double hi, const char *label)
{
	for (int i = 0; i <= 4; i++) {
		double v = lo + (hi - lo) * i / 4, y = y_of(v, lo, hi);

		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n",
			MARGIN_L, PLOT_W - 10, y, y, MARGIN_L - 6, y + 4, v);
	}
	fprintf(f, "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" "
		"text-anchor=\"middle\">%s</text>\n", PLOT_H / 2, PLOT_H / 2, label);
}

/* Every measured step of mode m, as dots in a column beside its box. */
static void strip(FILE *f, const struct compare *c, int m, double x, double lo, double hi)
{
	unsigned int i = 0;

	for (size_t k = 0; k < c->steps.len; k++) {
		const struct compare_step *s = vec_at(&c->steps, struct compare_step, k);

		if (s->mode != m || s->partial)
			continue;
		/* A fixed jitter, so that equal times stay apart and the page is reproducible. */
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\" "
			"fill-opacity=\"0.7\"/>\n", x + (double)(i++ % 5) * 4,
			y_of((double)s->dur_ns / 1e6, lo, hi), mode_colours[m]);
	}
}

static void box_plot(FILE *f, const struct compare *c)
{
	double lo, hi, slot = (double)(PLOT_W - MARGIN_L - 10) / (double)c->cfg.nmodes;

	step_range(c, false, &lo, &hi);
	fprintf(f, "<h2>Step time per mode</h2>\n<svg id=\"box\" width=\"%d\" height=\"%d\">\n",
		PLOT_W, PLOT_H);
	y_axis(f, lo, hi, "step time (ms)");
	for (size_t i = 0; i < c->cfg.nmodes; i++) {
		int m = c->cfg.modes[i];
		const struct dist *d = &c->res[m].step_ns;
		double x = MARGIN_L + slot * ((double)i + 0.5), w = slot * 0.35;

		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s (n=%lu)</text>\n", x,
			PLOT_H - 15, compare_mode_name(m), (unsigned long)c->res[m].steps);
		if (!c->res[m].has_steps)
			continue;
		strip(f, c, m, x + w + 12, lo, hi);
		fprintf(f, "<g class=\"mode-%s\" stroke=\"#333\">"
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>"
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke-width=\"2\"/>"
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#fff\"/></g>\n",
			compare_mode_name(m), x, x, y_of(d->min / 1e6, lo, hi), y_of(d->max / 1e6, lo, hi),
			x - w, fmin(y_of(d->p75 / 1e6, lo, hi), y_of(d->median / 1e6, lo, hi) - 5), 2 * w,
			fmax(10, y_of(d->p25 / 1e6, lo, hi) - y_of(d->p75 / 1e6, lo, hi)), mode_colours[m],
			x - w, x + w, y_of(d->median / 1e6, lo, hi), y_of(d->median / 1e6, lo, hi),
			x, y_of(d->p95 / 1e6, lo, hi));
	}
	fputs("</svg>\n<p>Boxes: quartiles (at least 10 pixels tall, so that a tight one shows); "
	      "bar: median; whiskers: min to max; white dot: p95; dots to the right: each step.</p>\n",
	      f);
}

static void timeline(FILE *f, const struct compare *c)
{
	const struct compare_step *last = NULL;
	double lo, hi, span;

	/* The measured steps set the scale; others beyond it are drawn at its edge. */
	step_range(c, false, &lo, &hi);
	for (size_t i = 0; i < c->steps.len; i++) {
		const struct compare_step *s = vec_at(&c->steps, struct compare_step, i);

		if (!last || s->start_mono > last->start_mono)
			last = s;
	}
	span = last ? (double)(last->start_mono + last->dur_ns - c->t0) / 1e9 : 1;
	span = span > 0 ? span : 1;
	fprintf(f, "<h2>Step time over the run</h2>\n<svg id=\"timeline\" width=\"%d\" "
		"height=\"%d\">\n", PLOT_W, PLOT_H);
	y_axis(f, lo, hi, "step time (ms)");
	for (int i = 0; i <= 4; i++)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3g s</text>\n",
			MARGIN_L + (PLOT_W - MARGIN_L - 10) * i / 4.0, PLOT_H - 15, span * i / 4);
	for (size_t i = 0; i < c->steps.len; i++) {
		const struct compare_step *s = vec_at(&c->steps, struct compare_step, i);
		double x = MARGIN_L + (double)(s->start_mono - c->t0) / 1e9 / span *
					      (PLOT_W - MARGIN_L - 10);

		if (s->partial)
			continue;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"/>\n", x,
			y_of(fmin(fmax((double)s->dur_ns / 1e6, lo), hi), lo, hi), s->mode >= 0 ? 4 : 2,
			s->mode >= 0 ? mode_colours[s->mode] : "#bbb");
	}
	fputs("</svg>\n<p>Grey: steps between windows (warmup, skipped), not measured; a step "
	      "beyond the scale is drawn at its edge.</p>\n", f);
}

static uint64_t kernel_launches(const struct compare_kernel *k)
{
	uint64_t n = 0;

	for (int m = 0; m < MODE__COUNT; m++)
		n += k->launches[m];
	return n;
}

/* Horizontal bars of the top kernels by GPU time (gpu) or by launches. */
static void kernel_bars(FILE *f, const struct compare *c, bool gpu)
{
	const struct compare_kernel *top[TOP_KERNELS];
	size_t n = 0;
	double max = 0;

	for (size_t i = 0; i < c->kernels.len; i++) {
		const struct compare_kernel *k = vec_at(&c->kernels, struct compare_kernel, i);
		double v = gpu ? (double)k->gpu_ns : (double)kernel_launches(k);
		size_t j;

		if (v <= 0)
			continue;
		/* Insertion into the top list, largest first. */
		for (j = n; j > 0; j--) {
			double u = gpu ? (double)top[j - 1]->gpu_ns : (double)kernel_launches(top[j - 1]);

			if (u >= v)
				break;
			if (j < TOP_KERNELS)
				top[j] = top[j - 1];
		}
		if (j < TOP_KERNELS) {
			top[j] = k;
			n += n < TOP_KERNELS;
		}
	}
	fprintf(f, "<h2>Top %s</h2>\n", gpu ? "GPU work by time (cupti windows)" :
							 "kernels by launches (all probe windows)");
	if (!n) {
		fprintf(f, "<p>None: %s</p>\n", gpu ? "no GPU time was measured (no cupti window "
						      "brought GPU records)" : "no launch was recorded");
		return;
	}
	max = gpu ? (double)top[0]->gpu_ns : (double)kernel_launches(top[0]);
	fprintf(f, "<svg id=\"%s\" width=\"%d\" height=\"%zu\">\n", gpu ? "kernels-gpu" :
		"kernels-launches", PLOT_W, n * 22 + 10);
	for (size_t i = 0; i < n; i++) {
		double v = gpu ? (double)top[i]->gpu_ns : (double)kernel_launches(top[i]);
		double w = v / max * (PLOT_W - 330);

		fprintf(f, "<rect x=\"5\" y=\"%zu\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>"
			"<text x=\"%.1f\" y=\"%zu\">", i * 22 + 5, fmax(w, 1),
			mode_colours[gpu ? MODE_CUPTI : MODE_BPF], fmax(w, 1) + 10, i * 22 + 18);
		if (gpu)
			fprintf(f, "%.3f ms ", v / 1e6);
		else
			fprintf(f, "%.0f ", v);
		esc(f, top[i]->name);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

static void cell_num(FILE *f, bool known, const char *fmt, double v)
{
	fputs("<td>", f);
	if (known)
		fprintf(f, fmt, v);
	else
		fputs("&ndash;", f);
	fputs("</td>", f);
}

static void cost_table(FILE *f, const struct compare *c)
{
	fputs("<h2>Step time and cost per mode</h2>\n<table id=\"costs\"><tr><th>mode</th>"
	      "<th>steps</th><th>median ms</th><th>p95 ms</th><th>vs off</th><th>95% CI</th>"
	      "<th>launches/step</th><th>added &micro;s/step</th><th>probe cost &micro;s/step</th>"
	      "<th>CUPTI overhead &micro;s/step</th><th>explained</th></tr>\n", f);
	for (size_t i = 0; i < c->cfg.nmodes; i++) {
		int m = c->cfg.modes[i];
		const struct compare_result *r = &c->res[m];

		fprintf(f, "<tr><td class=\"n\"><span style=\"color:%s\">&#9632;</span> %s</td>"
			"<td>%lu</td>", mode_colours[m], compare_mode_name(m), (unsigned long)r->steps);
		cell_num(f, r->has_steps, "%.3f", r->step_ns.median / 1e6);
		cell_num(f, r->has_steps, "%.3f", r->step_ns.p95 / 1e6);
		cell_num(f, r->has_vs_off || m == MODE_OFF, "%.3f", m == MODE_OFF ? 1 : r->vs_off.ratio);
		fputs("<td>", f);
		if (r->has_vs_off && r->vs_off.has_ci)
			fprintf(f, "%.3f &ndash; %.3f", r->vs_off.ratio_lo, r->vs_off.ratio_hi);
		else
			fputs(m == MODE_OFF ? "baseline" : "&ndash;", f);
		fputs("</td>", f);
		cell_num(f, r->has_launches && r->window_steps, "%.1f", r->launches_per_step);
		cell_num(f, r->has_vs_off, "%.1f", r->vs_off.diff / 1e3);
		cell_num(f, r->has_launches && r->has_probe_cost, "%.1f", r->probe_cost_per_step_ns / 1e3);
		cell_num(f, m == MODE_CUPTI && r->has_cupti_overhead, "%.1f",
			 r->cupti_overhead_per_step_ns / 1e3);
		fprintf(f, "<td>%s</td></tr>\n", r->explained > 0 ? "yes" : r->explained == 0 ? "no" :
			"&ndash;");
	}
	fputs("</table>\n<p>Added: the median step's time over off's. Probe cost: probe hits "
	      "per step &times; the per-hit cost calibrated at start; CUPTI overhead: CUPTI's "
	      "OVERHEAD records per step. Explained: their sum lies in the added time's 95% "
	      "confidence interval (bootstrap).</p>\n", f);
}

/* Per API: calls in each probe mode, and each call's duration from the latency windows. */
static void api_table(FILE *f, const struct compare *c)
{
	const struct compare_result *lat = &c->res[MODE_LATENCY];
	bool any = false;

	for (int m = 1; m < MODE__COUNT; m++)
		any |= c->res[m].selected && c->res[m].apis.len;
	if (!any)
		return;
	fputs("<h2>APIs</h2>\n<table id=\"apis\"><tr><th>API</th>", f);
	for (size_t i = 0; i < c->cfg.nmodes; i++)
		if (c->cfg.modes[i] != MODE_OFF)
			fprintf(f, "<th>calls (%s)</th>", compare_mode_name(c->cfg.modes[i]));
	fputs("<th>median &micro;s</th><th>p95 &micro;s</th></tr>\n", f);
	for (int m = 1; m < MODE__COUNT; m++) {
		for (size_t i = 0; i < c->res[m].apis.len; i++) {
			const struct compare_api *a = vec_at(&c->res[m].apis, struct compare_api, i);
			const struct compare_api *l = NULL;
			bool first = true;

			/* Each API once: in the first mode that has it. */
			for (int p = 1; p < m && first; p++)
				for (size_t j = 0; j < c->res[p].apis.len && first; j++)
					first = strcmp(vec_at(&c->res[p].apis, struct compare_api, j)->name,
						       a->name) != 0;
			if (!first)
				continue;
			fputs("<tr><td class=\"n\">", f);
			esc(f, a->name);
			fputs("</td>", f);
			for (size_t k = 0; k < c->cfg.nmodes; k++) {
				const struct compare_result *r = &c->res[c->cfg.modes[k]];
				uint64_t calls = 0;

				if (c->cfg.modes[k] == MODE_OFF)
					continue;
				for (size_t j = 0; j < r->apis.len; j++) {
					const struct compare_api *b = vec_at(&r->apis, struct compare_api, j);

					if (!strcmp(b->name, a->name))
						calls = b->calls;
				}
				fprintf(f, "<td>%lu</td>", (unsigned long)calls);
			}
			for (size_t j = 0; j < lat->apis.len; j++) {
				const struct compare_api *b = vec_at(&lat->apis, struct compare_api, j);

				if (!strcmp(b->name, a->name) && b->has_latency)
					l = b;
			}
			cell_num(f, l, "%.2f", l ? l->latency_ns.median / 1e3 : 0);
			cell_num(f, l, "%.2f", l ? l->latency_ns.p95 / 1e3 : 0);
			fputs("</tr>\n", f);
		}
	}
	fputs("</table>\n<p>Durations: from the latency windows' return probes (the call's "
	      "time on the CPU).</p>\n", f);
}

int compare__write_html(const struct compare *c, FILE *f)
{
	head(f, c);
	notes(f, c);
	cost_table(f, c);
	box_plot(f, c);
	timeline(f, c);
	kernel_bars(f, c, true);
	kernel_bars(f, c, false);
	api_table(f, c);
	fputs("<p>Figures: compare.json beside this page; traces: &lt;mode&gt;/run_&lt;k&gt;/.</p>\n"
	      "</body></html>\n", f);
	return fflush(f) || ferror(f) ? -EIO : 0;
}
