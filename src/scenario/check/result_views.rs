//! `results:`: each view's form (see [`crate::scenario::results`]), its name unique, and
//! the workloads and phases it names known.

use super::checker::Checker;
use crate::error::Result;
use crate::scenario::results::{self, Measure, ResultFile, ResultView};
use crate::suggest;

impl Checker<'_> {
    /// The checked views; `names` are the workloads, `phases` the labels the timeline gives.
    pub(super) fn result_views(
        &self,
        files: &[ResultFile],
        names: &[&str],
        phases: &[&str],
    ) -> Result<Vec<ResultView>> {
        let mut views: Vec<ResultView> = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let i = i.to_string();
            let at = ["results", i.as_str(), "name"];
            self.one_line(&at, &f.name)?;
            if views.iter().any(|v| v.name == f.name) {
                return Err(self.err(&at, format!("`{}`: another result has that name", f.name)));
            }
            let view = results::view(f).map_err(|(key, msg)| {
                let mut path = vec!["results".to_string(), i.clone()];
                path.extend(key);
                self.fail(&path, msg)
            })?;
            if let Measure::Workloads { names: used, .. } = &view.measure {
                for (k, name) in used.iter().enumerate() {
                    if !names.contains(&name.as_str()) {
                        return Err(
                            self.err(&["results", &i, "workloads", &k.to_string()], suggest::no_workload(name, names))
                        );
                    }
                }
            }
            for (k, label) in view.phases.iter().enumerate() {
                if !phases.contains(&label.as_str()) {
                    let known = if phases.is_empty() { "none".to_string() } else { phases.join(", ") };
                    return Err(self.err(
                        &["results", &i, "phases", &k.to_string()],
                        format!(
                            "no phase is labelled `{label}`{} (phases: {known})",
                            suggest::hint(label, phases.iter().copied())
                        ),
                    ));
                }
            }
            views.push(view);
        }
        Ok(views)
    }
}
