//! `fathom report`: one self-contained HTML file per run (inline CSS, SVG charts and a
//! few lines of script; no network needed to view it) that opens in any browser and
//! prints well. Every figure comes from the same [`RunSummary`] `fathom show` prints,
//! so the page and the terminal never disagree.

use super::bins::bin_for;
use super::chart::{Chart, esc};
use super::format::{count, latency_us, seconds, sig3};
use super::run_charts::{curves, histograms, observed_charts, time_series, timeline_decor};
use super::sections::{findings, phases, workloads};
use super::summary::RunSummary;
use super::table;
use crate::error::Result;
use crate::metrics::headline::Better;
use crate::metrics::summary::{OpSummary, Throughput};
use crate::store::Store;
use std::fmt::Write;

/// The scenario's `description_html:` as the run stored it.
#[derive(serde::Deserialize)]
struct DescribedHtml {
    description_html: Option<String>,
}

/// A scenario's HTML description made safe to show inside the report: no script, no
/// event handler or style attribute, nothing fetched (the report is read offline and
/// must not call out): images only from `data:` URLs, links keep their text but lose
/// their target.
fn sanitised(html: &str) -> String {
    ammonia::Builder::default()
        .url_schemes(std::collections::HashSet::from(["data"]))
        .url_relative(ammonia::UrlRelative::Deny)
        .rm_tag_attributes("a", &["href"])
        .link_rel(None)
        .clean(html)
        .to_string()
}

/// A page's Content-Security-Policy, as a `<meta>` for the head: it loads nothing (no
/// fetch, frame, font or form), its images are `data:` URLs and its styles inline, and
/// the only script that runs is `script`, fathom's own, named by its hash. A script that
/// reached the page another way (through a scenario's description) does not run, even
/// if the sanitiser missed it.
pub(super) fn content_security_policy(script: Option<&str>) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let scripts = match script {
        Some(s) => format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(s))),
        None => "'none'".to_string(),
    };
    format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; \
         style-src 'unsafe-inline'; script-src {scripts}; base-uri 'none'; form-action 'none'\">"
    )
}

/// Everything the page shows, gathered from the store.
pub struct Report {
    pub summary: RunSummary,
    pub charts: Vec<Chart>,
    /// Seconds per bin of the summary's time series (`scans[..].bins`).
    pub bin: i64,
}

impl Report {
    pub fn build(store: &Store, which: &str) -> Result<Report> {
        let run = store.run(which)?;
        let span = store.workloads(run.id)?.iter().map(|w| w.end_t).max().unwrap_or(0);
        let bin = bin_for(span);
        let summary = RunSummary::load_binned(store, &run.id.to_string(), Some(bin))?;
        let mut charts = time_series(&summary, bin);
        charts.extend(observed_charts(store, &summary, bin)?);
        let (bands, marks) = timeline_decor(&summary);
        for mut c in super::hosts::charts(store, &summary, bin)? {
            (c.bands, c.marks) = (bands.clone(), marks.clone());
            charts.push(c);
        }
        charts.extend(curves(&summary));
        charts.extend(super::views_print::charts(&summary));
        charts.extend(super::results_print::charts(&summary));
        charts.extend(histograms(&summary));
        Ok(Report { summary, charts, bin })
    }

    /// The whole page.
    pub fn html(&self) -> String {
        let s = &self.summary;
        let r = &s.run;
        let mut h = String::with_capacity(64 * 1024);
        let title = format!("fathom run {} · {}", r.id, r.scenario);
        let _ = write!(
            h,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">{}\
             <title>{}</title><style>{STYLE}</style></head>\n<body>\n",
            content_security_policy(Some(SCRIPT)),
            esc(&title)
        );
        let duration = r.duration_s.map(seconds).unwrap_or_else(|| "still running".into());
        let _ = write!(
            h,
            "<header><h1>{}</h1><p class=\"sub\">run {} · started {} · {} · <span class=\"status {}\" id=\"status\">{}</span></p>",
            esc(&r.scenario),
            r.id,
            esc(&r.started_at),
            duration,
            esc(&r.status),
            esc(&r.status)
        );
        if let Some(f) = r.time_scale {
            let _ = write!(h, "<p class=\"sub\">{}</p>", esc(&crate::scenario::time_scale::describe(f)));
        }
        if let Some(e) = &r.error {
            let _ = write!(h, "<p class=\"error\">{}</p>", esc(e));
        }
        if let Some(d) = super::analysis::stored::<DescribedHtml>(r).and_then(|d| d.description_html) {
            // a long description (X-Ray's run to a screen and more) folds away: the answer first
            let clean = sanitised(&d);
            let open = if clean.len() < LONG_DESCRIPTION { " open" } else { "" };
            let _ = write!(
                h,
                "<details class=\"about\"{open}><summary>About this scenario</summary>\
                 <div class=\"description\" id=\"description\">{clean}</div></details>"
            );
        }
        h.push_str("</header>\n");
        self.headline(&mut h);
        // the chart that answers the study first: the curve, the sweep, before and during
        self.charts_section(&mut h, "curves", "Curves", |c| c.id.starts_with("curve-"));
        super::views_print::html(s, &self.charts, &mut h);
        self.results(&mut h);
        super::results_print::html(s, &self.charts, &mut h);
        self.charts_section(&mut h, "timeseries", "Over time", |c| c.id.starts_with("ts-"));
        self.charts_section(&mut h, "observed", "Host and devices", |c| c.id.starts_with("obs-"));
        self.charts_section(&mut h, "histograms", "Latency histograms", |c| c.id.starts_with("hist-"));
        self.environment(&mut h);
        self.analysis(&mut h);
        let _ = write!(
            h,
            "<footer>fathom {} · <code>{}</code></footer>\n<script>{SCRIPT}</script>\n</body></html>\n",
            esc(env!("BUILD_IDENTITY")),
            esc(&r.command)
        );
        h
    }

    /// The figures a reader wants first, per workload: IOPS, MB/s, p99; and what went
    /// wrong, every lint warning and failed expectation.
    fn headline(&self, h: &mut String) {
        let s = &self.summary;
        h.push_str("<section id=\"headline\">");
        if let Some(a) = &s.answer {
            let class = if a.passed { "pass" } else { "fail" };
            let _ = write!(h, "<p class=\"answer {class}\" id=\"answer\">{}</p>", esc(&a.line()));
        }
        h.push_str("<div class=\"cards\">");
        self.curve_cards(h);
        let more = s.workloads.len().saturating_sub(MAX_CARDS);
        for w in s.workloads.iter().take(if more > 0 { MAX_CARDS - 1 } else { MAX_CARDS }) {
            let ops: Vec<&OpSummary> = w.ops.iter().filter(|o| o.op != "sync").collect();
            let iops: f64 = ops.iter().map(|o| o.iops).sum();
            let mbps: f64 = ops.iter().map(|o| o.mb_per_s).sum();
            let p99 = ops.iter().map(|o| o.latency.p99_us).fold(0.0, f64::max);
            let name = &w.workload.name;
            if let Some(q) = super::headline::of(w, &s.observed).filter(|q| q.declared) {
                declared_card(h, &q);
                continue;
            }
            if !ops.is_empty() && ops.iter().all(|o| o.is_network()) {
                let gbit = mbps * 8.0 / 1000.0;
                let _ = write!(
                    h,
                    "<div class=\"card\"><div class=\"name\">{}</div>\
                     <div><span class=\"big\" data-workload=\"{0}\" data-metric=\"gbit_per_s\" data-value=\"{gbit}\">{gbit:.2}</span> Gbit/s</div>\
                     <div><span data-workload=\"{0}\" data-metric=\"mb_per_s\" data-value=\"{mbps}\">{}</span> MB/s over {} streams</div></div>",
                    esc(name),
                    sig3(mbps),
                    w.workload.workers
                );
                continue;
            }
            // pgbench's ops are transactions: TPS, and no bytes of their own
            let unit = ops.first().map_or(Throughput::Iops, |o| o.unit);
            let bytes = match unit.counts_bytes() {
                true => format!(
                    "<span data-workload=\"{}\" data-metric=\"mb_per_s\" data-value=\"{mbps}\">{}</span> MB/s · ",
                    esc(name),
                    sig3(mbps)
                ),
                false => String::new(),
            };
            let _ = write!(
                h,
                "<div class=\"card\"><div class=\"name\">{}</div>\
                 <div><span class=\"big\" data-workload=\"{0}\" data-metric=\"{}\" data-value=\"{iops}\">{}</span> {}</div>\
                 <div>{bytes}p99 <span data-workload=\"{0}\" data-metric=\"p99_us\" data-value=\"{p99}\">{}</span></div></div>",
                esc(name),
                unit.key(),
                count(iops),
                unit.label(),
                latency_us(p99)
            );
        }
        if more > 0 {
            let _ = write!(
                h,
                "<div class=\"card\"><div class=\"name\">{} more workloads</div><div>in the Results table</div></div>",
                more + 1
            );
        }
        h.push_str("</div>");
        let failed: Vec<_> = s.expectations.iter().filter(|e| !e.passed).collect();
        if !s.warnings.is_empty() || !failed.is_empty() {
            h.push_str("<ul class=\"warnings\">");
            for e in failed {
                let _ = write!(h, "<li class=\"fail\">expectation failed: {}</li>", esc(&e.text));
            }
            for w in &s.warnings {
                let _ = write!(h, "<li><b>{}</b>: {}</li>", esc(&w.code), esc(&w.message));
            }
            h.push_str("</ul>");
        }
        h.push_str("</section>\n");
    }

    /// A concurrency study's answer as cards: where a one-point test stands, and the
    /// highest concurrency with its scaling efficiency.
    fn curve_cards(&self, h: &mut String) {
        let s = &self.summary;
        let Some(c) = &s.analysis.curve else { return };
        let label = |i: usize| s.phases.get(i).map(|p| p.phase.label.clone()).unwrap_or_default();
        let top = c.highest();
        let unit = c.unit.label();
        let here = c.points[c.you_are_here].1;
        let _ = write!(
            h,
            "<div class=\"card\"><div class=\"name\">you are here: {}</div><div><span class=\"big\" \
             data-metric=\"you_are_here\" data-value=\"{here}\">{}</span> {unit}</div><div>the lowest concurrency, \
             what a one-point test reports</div></div>",
            esc(&label(c.you_are_here)),
            count(here)
        );
        let (x, efficiency) = (c.points[top].1, c.efficiency[top]);
        let _ = write!(
            h,
            "<div class=\"card\"><div class=\"name\">at {}</div><div><span class=\"big\" data-metric=\"top\" \
             data-value=\"{x}\">{}</span> {unit}</div><div>scaling efficiency <span data-metric=\"efficiency\" \
             data-value=\"{efficiency}\">{efficiency:.2}</span> (1 = perfect)</div></div>",
            esc(&label(top)),
            count(x)
        );
    }

    /// Per workload and op: rates and latency percentiles; open-loop ops against their
    /// targets; network streams; each host's share; asked against achieved.
    fn results(&self, h: &mut String) {
        let s = &self.summary;
        h.push_str(
            "<section id=\"results\"><h2>Results</h2><p class=\"note\">Over each workload's measured window (ramp \
             excluded). Latency is from the intended start for open-loop (rate-limited) workloads, so stalls count; \
             service time is from submission.</p>",
        );
        let results = workloads::results(s);
        if !results.is_empty() {
            table::html::table(&results, h);
        }
        let more = [workloads::open_loop(s), workloads::network(s), workloads::hosts(s), workloads::fidelity(s)];
        for t in more.iter().chain([&workloads::checked(s)]) {
            table::html::render(t, h);
        }
        h.push_str("</section>\n");
    }

    fn environment(&self, h: &mut String) {
        let env = &self.summary.run.environment;
        let text = |k: &str| env.get(k).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
        let mut rows: Vec<(String, String)> = Vec::new();
        // the build (version, commit, changes) where the run stored it, else its version
        let fathom = if env.get("fathom_build").is_some() { "fathom_build" } else { "fathom_version" };
        for (label, key) in
            [("fathom", fathom), ("host", "hostname"), ("kernel", "kernel"), ("OS", "os"), ("CPU", "cpu_model")]
        {
            if let Some(v) = text(key) {
                rows.push((label.into(), v));
            }
        }
        if let Some(n) = env.get("cpus").and_then(|v| v.as_u64()) {
            rows.push(("cores".into(), n.to_string()));
        }
        if let Some(m) = env.get("memory_bytes").and_then(|v| v.as_f64()) {
            rows.push(("memory".into(), format!("{} GiB", sig3(m / (1u64 << 30) as f64))));
        }
        for t in env.get("targets").and_then(|v| v.as_array()).map(Vec::as_slice).unwrap_or_default() {
            let get = |k: &str| t.get(k).and_then(|v| v.as_str()).unwrap_or("");
            rows.push(("target".into(), format!("{} ({} on {})", get("path"), get("filesystem"), get("device"))));
        }
        h.push_str("<section id=\"environment\"><h2>Environment</h2><table class=\"kv\">");
        for (k, v) in rows {
            let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
        }
        h.push_str("</table>");
        let _ = writeln!(
            h,
            "<details><summary>Scenario as run</summary><pre>{}</pre></details></section>",
            esc(&self.summary.run.scenario_text)
        );
    }

    fn charts_section(&self, h: &mut String, id: &str, title: &str, pick: impl Fn(&Chart) -> bool) {
        let charts: Vec<&Chart> = self.charts.iter().filter(|c| pick(c)).collect();
        if charts.is_empty() {
            return;
        }
        let _ = write!(h, "<section id=\"{id}\"><h2>{title}</h2>");
        for c in charts {
            h.push_str("<figure>");
            h.push_str(&c.svg());
            h.push_str("</figure>");
        }
        h.push_str("</section>\n");
    }

    /// Workloads compared, Little's law, per phase what ran and how steady, the
    /// expectations and the timeline's events.
    fn analysis(&self, h: &mut String) {
        let s = &self.summary;
        h.push_str("<section id=\"analysis\"><h2>Analysis</h2>");
        let tables = [
            findings::compared(s),
            findings::littles_law(s),
            phases::ran(s),
            phases::steadiness(s),
            findings::checkpoints(s),
        ];
        for t in tables {
            table::html::render(&t, h);
        }
        self.expectations(h);
        table::html::render(&findings::events(s), h);
        for t in findings::event_tables(s) {
            table::html::render(&t, h);
        }
        h.push_str("</section>\n");
    }

    /// The scenario's expectations, each passed or failed, with what was measured.
    fn expectations(&self, h: &mut String) {
        let s = &self.summary;
        if !s.expectations.is_empty() {
            h.push_str("<h3>Expectations</h3><table><thead><tr><th></th><th>expectation</th><th>measured</th></tr></thead><tbody>");
            for e in &s.expectations {
                let _ = write!(
                    h,
                    "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td></tr>",
                    if e.passed { "pass" } else { "fail" },
                    if e.passed { "pass" } else { "FAIL" },
                    esc(&e.text),
                    esc(&super::expect::measured_text(e))
                );
            }
            h.push_str("</tbody></table>");
        }
    }
}

/// Workload cards the headline shows at most: beyond, the Results table has them.
const MAX_CARDS: usize = 8;

/// A description longer than this (in bytes of HTML) starts folded.
const LONG_DESCRIPTION: usize = 600;

/// The page style, shared with `fathom compare`.
pub const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;max-width:1100px;margin:0 auto;padding:0 24px 40px}
header{border-bottom:2px solid #4e79a7;margin-bottom:12px}
h1{margin:18px 0 4px;font-size:26px}h2{margin-top:28px;border-bottom:1px solid #ddd;font-size:19px}h3{font-size:15px}
.sub{color:#555;margin:0 0 10px}.note{color:#555;font-size:13px;max-width:80ch}
.status{font-weight:bold}.status.completed{color:#2e7d32}.status.failed,.status.aborted{color:#c62828}
.error{color:#c62828}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #ccd;border-radius:6px;padding:10px 14px;min-width:180px}
.card .name{font-weight:bold;color:#4e79a7}.big{font-size:26px;font-weight:bold}
.warnings li{color:#8a5a00;margin:4px 0;font-size:13px}.warnings li.fail,tr.fail{color:#c62828}
.answer{font-size:16px;font-weight:bold;margin:8px 0}.answer.pass{color:#2e7d32}.answer.fail{color:#c62828}
.description img{max-width:100%;height:auto}details.about summary{cursor:pointer;color:#4e79a7}
table{border-collapse:collapse;font-size:13px;margin:8px 0}th,td{padding:3px 9px;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}thead th{border-bottom:2px solid #ccc}
th.l,td.l{text-align:left}th.r,td.r{text-align:right}
table.kv th{text-align:left;color:#555}table.kv td{text-align:left}tr.flag{background:#fff4e0}
figure{margin:14px 0}svg.chart{max-width:100%;height:auto}svg .series{cursor:pointer}
pre{background:#f6f8fa;padding:10px;overflow:auto;font-size:12px}footer{margin-top:30px;color:#777;font-size:12px}
@media print{body{max-width:none}figure,table{break-inside:avoid}details{display:none}}
";

/// Clicking a legend entry's series hides or shows it; `data-ready` tells a test the
/// script ran to its end.
const SCRIPT: &str = "
document.querySelectorAll('svg.chart .series').forEach(function(g){
  g.addEventListener('click',function(){g.style.opacity=g.style.opacity==='0.15'?'1':'0.15';});
  var t=document.createElementNS('http://www.w3.org/2000/svg','title');t.textContent=g.dataset.name;g.appendChild(t);
});
document.body.dataset.ready='1';
";

/// The card of a workload its program reads by a figure of its own (`42,590 NOPM`, `from
/// 101,575 TPM` under it; `45.2 s query set`), that figure carrying `data-metric`.
fn declared_card(h: &mut String, q: &super::headline::Quoted) {
    let (big, unit) = match q.better {
        Better::Higher => (count(q.value), q.label.clone()),
        Better::Lower => (sig3(q.value), format!("s {}", q.label)),
    };
    let _ = write!(
        h,
        "<div class=\"card\"><div class=\"name\">{}</div>\
         <div><span class=\"big\" data-workload=\"{0}\" data-metric=\"{}\" data-value=\"{}\">{big}</span> {}</div>\
         <div>{}</div></div>",
        esc(&q.workload),
        esc(&q.label),
        q.value,
        esc(&unit),
        esc(&q.beside)
    );
}
