//! Checks of the scenario as a whole: names and labels one line each, workloads resolved
//! in timeline order, ramps by host, the memory and rate budget, expectations, compared
//! workloads and the remote Prometheus queries.

use super::checker::Checker;
use crate::error::Result;
use crate::scenario::file::{RemoteFile, ScenarioFile};
use crate::scenario::model::{EngineKind, RemoteQueries, Scenario, Workload};
use crate::scenario::units::Span;
use crate::scenario::{budget, expect, limits, step_env, steps};
use crate::suggest;
use indexmap::IndexMap;
use std::time::Duration;

impl Checker<'_> {
    /// Refuses an `exec` step that uses a `$FATHOM_DSN` variable no database workload
    /// provides: it would act on whatever server libpq reaches by default, or fail the
    /// run when it comes. `steps` are the timeline's, one per step written.
    fn commands_reach_databases(&self, steps: &[steps::Step], workloads: &[Workload]) -> Result<()> {
        let databases = step_env::databases(workloads);
        for (i, step) in steps.iter().enumerate() {
            if let steps::Action::Command(c) = &step.action
                && let steps::Command::Exec(command) = &c.command
                && let Some(why) = step_env::unprovided(command, &databases)
            {
                return Err(self.err(&["timeline", &i.to_string(), "exec"], why));
            }
        }
        Ok(())
    }

    /// Checks a scenario file as a whole and resolves it into a [`Scenario`].
    /// The checks run in the order a reader meets the keys, so the first error is the
    /// first wrong key.
    pub fn resolve(&self, file: ScenarioFile, text: &str) -> Result<Scenario> {
        // a timeline of commands alone (X-Ray's playbook-driven scenarios) runs without
        let commands = file.timeline.iter().flatten().any(|s| s.exec.is_some() || s.hook.is_some());
        if file.workloads.is_empty() && !commands {
            return Err(self.err(
                &["workloads"],
                "a scenario needs at least one workload (or a timeline of `exec` or `hook` steps)",
            ));
        }
        let names: Vec<&str> = file.workloads.keys().map(String::as_str).collect();
        let mut steps = match &file.timeline {
            // without a timeline, every workload starts at once
            None => (0..names.len())
                .map(|workload| steps::Step {
                    at: None,
                    phase: None,
                    action: steps::Action::Start { workload, stagger: Duration::ZERO, wait: false },
                })
                .collect(),
            Some(raw) => self.timeline(raw, &names)?,
        };
        let run_for = self.run_for(&file, &steps, names.len())?;
        self.labels(&file)?;
        let defaults = file.defaults.clone().unwrap_or_default();
        self.profile_text(&["defaults"], &defaults)?;
        // a program's keys in `defaults` are for the workloads of that program
        self.known_keys(&["defaults"], &defaults, true)?;
        for (name, profile) in &file.workloads {
            // its run's files are named after it (`NAME.fio`, `NAME.pgbench-log`)
            self.file_name_part(&["workloads", name], &["workloads"], name)?;
            self.profile_text(&["workloads", name], profile)?;
        }
        let mut workloads = Vec::new();
        for ((name, profile), run_for) in file.workloads.iter().zip(run_for) {
            workloads.push(self.workload(name, profile, &defaults, run_for)?);
        }
        self.sets_reach_a_workload(&workloads)?;
        self.no_ramp_on_fio(&steps, &workloads)?;
        self.commands_reach_databases(&steps, &workloads)?;
        for step in &steps {
            if let steps::Action::Fill { workload, .. } = step.action
                && let Some(io) = workloads[workload].io_mut()
            {
                io.filled = true;
            }
        }
        self.ramps_by_host(&mut steps, &workloads)?;
        budget::check(&workloads, &steps).map_err(|(i, msg)| self.err(&["workloads", &workloads[i].name], msg))?;
        // what `during` may name: a phase a step labels, or a workload
        let labels: Vec<&str> = steps.iter().filter_map(|s| s.phase.as_deref()).collect();
        let ramped = ramp_phases(&steps, &names);
        let expect = self.expectations(&file, &labels, &ramped, &names)?;
        let mut phases: Vec<&str> = labels.clone();
        phases.extend(ramped.iter().map(String::as_str));
        let result_views = self.result_views(file.results.as_deref().unwrap_or_default(), &names, &phases)?;
        let remote = match file.observe.and_then(|o| o.prometheus) {
            Some(r) => Some(self.remote(r)?),
            None => None,
        };
        self.compare(file.compare.as_deref().unwrap_or_default(), file.prometheus.as_deref(), &names)?;
        let scenario = Scenario {
            name: file.name,
            description: file.description,
            text: text.to_string(),
            origin: self.src.origin.clone(),
            workloads,
            steps,
            expect,
            result_views,
            remote,
            prometheus: file.prometheus,
            vars: IndexMap::new(),
            resolved: String::new(),
            flattened: Vec::new(),
            time_scale: None,
            imported: None,
        };
        self.measurable(&scenario)?;
        Ok(scenario)
    }

    /// How long each workload runs when the timeline says: a start's `duration`, or a
    /// ramp's steps. It overrides the workload's own `duration`.
    fn run_for(&self, file: &ScenarioFile, steps: &[steps::Step], workloads: usize) -> Result<Vec<Option<Duration>>> {
        let mut run_for: Vec<Option<Duration>> = vec![None; workloads];
        for (i, (raw, step)) in file.timeline.iter().flatten().zip(steps).enumerate() {
            match step.action {
                steps::Action::Start { workload, .. } if raw.duration.is_some() => {
                    let d = raw.duration.unwrap_or(Span(Duration::ZERO)).0;
                    if d.is_zero() || d.subsec_nanos() != 0 {
                        let at = ["timeline", &i.to_string(), "duration"];
                        return Err(self.err(&at, "must be a whole number of seconds, at least 1s"));
                    }
                    run_for[workload] = Some(d);
                }
                steps::Action::Ramp { workload, add, every, until, .. } => {
                    run_for[workload] = Some(every * until.div_ceil(add));
                }
                _ => {}
            }
        }
        Ok(run_for)
    }

    /// The scenario's name, description, question and the timeline's labels: each one
    /// line, since reports show them on one.
    fn labels(&self, file: &ScenarioFile) -> Result<()> {
        self.one_line(&["name"], &file.name)?;
        for (key, text) in [("description", &file.description), ("question", &file.question)] {
            if let Some(text) = text {
                self.one_line(&[key], text)?;
            }
        }
        for (i, raw) in file.timeline.iter().flatten().enumerate() {
            for (key, label) in [("phase", &raw.phase), ("mark", &raw.mark)] {
                if let Some(label) = label {
                    self.one_line(&["timeline", &i.to_string(), key], label)?;
                }
            }
        }
        Ok(())
    }

    /// Refuses a ramp or a stagger of a workload on fio.
    /// fio starts all its jobs together, so it cannot add workers over time.
    fn no_ramp_on_fio(&self, steps: &[steps::Step], workloads: &[Workload]) -> Result<()> {
        for (i, step) in steps.iter().enumerate() {
            if let steps::Action::Ramp { workload, .. } | steps::Action::Start { workload, stagger: _, .. } =
                step.action
            {
                let w = &workloads[workload];
                let ramped = matches!(step.action, steps::Action::Ramp { .. })
                    || matches!(step.action, steps::Action::Start { stagger, .. } if !stagger.is_zero());
                if ramped && w.engine == Some(EngineKind::Fio) {
                    return Err(self.err(
                        &["timeline", &i.to_string()],
                        format!("`{}` runs on fio, whose jobs start together: no ramp or stagger", w.name),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Turns each `add_host` ramp into workers: hosts of `per_host` workers each.
    /// Only a workload placed on hosts can be ramped by host.
    fn ramps_by_host(&self, steps: &mut [steps::Step], workloads: &[Workload]) -> Result<()> {
        for (i, step) in steps.iter_mut().enumerate() {
            if let steps::Action::Ramp { workload, add, until, by_host: true, .. } = &mut step.action {
                let Some(p) = &workloads[*workload].placement else {
                    return Err(self.err(
                        &["timeline", &i.to_string(), "add_host"],
                        format!(
                            "`{}` is not placed on hosts (`hosts:`): ramp it with `add`",
                            workloads[*workload].name
                        ),
                    ));
                };
                if *until * p.per_host > limits::MAX_WORKERS {
                    return Err(self.err(
                        &["timeline", &i.to_string(), "until"],
                        format!(
                            "{until} hosts of {} workers (`per_host`) is {}: a workload has at most {} workers",
                            p.per_host,
                            *until * p.per_host,
                            limits::MAX_WORKERS
                        ),
                    ));
                }
                *add *= p.per_host;
                *until *= p.per_host;
            }
        }
        Ok(())
    }

    /// Parses `expect`, each expectation's `during` and phase reference checked against
    /// what may be named: a phase a step labels (`labels`), a ramp's phase (`ramped`) or
    /// a workload.
    fn expectations(
        &self,
        file: &ScenarioFile,
        labels: &[&str],
        ramped: &[String],
        names: &[&str],
    ) -> Result<Vec<expect::Expectation>> {
        let mut expect = Vec::new();
        for (i, e) in file.expect.iter().flatten().enumerate() {
            let at = ["expect", &i.to_string()];
            self.one_line(&at, e)?;
            let e = expect::parse_among(e, names).map_err(|msg| self.err(&at, msg))?;
            let phase_ref = match &e.relative {
                Some(expect::Reference::Phase(p)) => Some(("x", p)),
                _ => None,
            };
            for (word, during) in e.during.as_ref().map(|d| ("during", d)).into_iter().chain(phase_ref) {
                if !labels.contains(&during.as_str()) && !ramped.contains(during) && !names.contains(&during.as_str()) {
                    let phases = if labels.is_empty() { "none".to_string() } else { labels.join(", ") };
                    let known =
                        labels.iter().copied().chain(ramped.iter().map(String::as_str)).chain(names.iter().copied());
                    let hint = suggest::hint(during, known);
                    return Err(self.err(
                        &at,
                        format!(
                            "`{word} {during}`{hint}: no phase is labelled `{during}` and no workload has that name \
                             (phases: {phases}; workloads: {})",
                            names.join(", ")
                        ),
                    ));
                }
            }
            expect.push(e);
        }
        Ok(expect)
    }

    /// `compare` (at least two workloads, each one of the scenario's) and `prometheus`
    /// (one line).
    fn compare(&self, compare: &[String], prometheus: Option<&str>, names: &[&str]) -> Result<()> {
        if compare.len() == 1 {
            return Err(self.err(&["compare"], "names one workload: compare at least two (the first is the baseline)"));
        }
        if let Some(address) = prometheus {
            self.one_line(&["prometheus"], address)?;
        }
        for (i, name) in compare.iter().enumerate() {
            if !names.contains(&name.as_str()) {
                return Err(self.err(&["compare", &i.to_string()], suggest::no_workload(name, names)));
            }
        }
        Ok(())
    }

    /// Checks `observe: prometheus:`: an http:// or https:// URL and at least one query;
    /// every 5 s unless `interval` says otherwise; its credentials (`remote_auth`).
    fn remote(&self, mut r: RemoteFile) -> Result<RemoteQueries> {
        self.one_line(&["observe", "prometheus", "url"], &r.url)?;
        for name in r.queries.keys() {
            self.one_line(&["observe", "prometheus", "queries", name], name)?;
        }
        if !r.url.starts_with("http://") && !r.url.starts_with("https://") {
            let msg = format!("`{}`: expected an http:// or https:// URL", r.url);
            return Err(self.err(&["observe", "prometheus", "url"], msg));
        }
        if crate::secrets::url_has_credentials(&r.url) {
            return Err(self.err(&["observe", "prometheus", "url"], crate::secrets::URL_CREDENTIALS));
        }
        if r.queries.is_empty() {
            return Err(self.err(&["observe", "prometheus", "queries"], "expected at least one `name: PROMQL`"));
        }
        let interval = r.interval.map(|s| s.0).unwrap_or(Duration::from_secs(5));
        if interval < Duration::from_secs(1) {
            return Err(self.err(&["observe", "prometheus", "interval"], "expected 1s or more"));
        }
        let auth = self.remote_auth(&mut r)?;
        Ok(RemoteQueries {
            url: r.url.trim_end_matches('/').to_string(),
            auth,
            queries: r.queries.into_iter().collect(),
            interval,
        })
    }

    /// The credentials and trust of `r`'s requests (`scenario::auth`), an error at
    /// their key under `observe.prometheus`.
    fn remote_auth(&self, r: &mut RemoteFile) -> Result<crate::http::Auth> {
        crate::scenario::auth::check(r.take_auth()).map_err(|(key, msg)| {
            let mut at = vec!["observe", "prometheus"];
            at.extend(key.split('.'));
            self.err(&at, msg)
        })
    }
}

/// A ramp's phases, labelled by its workers (`vm x3`): `during` may name them.
fn ramp_phases(steps: &[steps::Step], names: &[&str]) -> Vec<String> {
    steps
        .iter()
        .filter_map(|s| match s.action {
            steps::Action::Ramp { workload, add, until, .. } => Some((workload, add, until)),
            _ => None,
        })
        .flat_map(|(w, add, until)| {
            let name = names[w];
            (1..=until.div_ceil(add)).map(move |k| format!("{name} x{}", (k * add).min(until)))
        })
        .collect()
}
