//! Reading a fio job file as fio does: `[sections]`, `[global]` options inherited by the
//! jobs after them (a job's own value wins), `include FILE` anywhere, `;` and `#`
//! comments, bare options (`time_based`), `${VAR}` from the environment and fio's
//! `$mb_memory`, `$pagesize`, `$ncpus`, and fio's option aliases. What each option means
//! is left to `mapping.rs`; this keeps where each was written, for errors.

use super::options::canonical;
use crate::error::{Error, Result};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where an option or a section was written: line 0 is no line of a file (a `--set`
/// on the command line, named as `file`), and is not shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Where {
    pub file: String,
    pub line: usize,
}

impl fmt::Display for Where {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => write!(f, "{}", self.file),
            line => write!(f, "{}:{line}", self.file),
        }
    }
}

/// One option as a job has it: its name after aliases, the name as written, its value
/// (none for a bare option) with variables substituted, and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    pub name: String,
    pub written: String,
    pub value: Option<String>,
    pub at: Where,
}

impl Opt {
    /// An error about this option: `FILE:LINE: option: message`, exit 2.
    pub fn err(&self, message: impl fmt::Display) -> Error {
        Error::input(format!("{}: {}: {message}", self.at, self.written))
    }

    /// The value, or the error of a bare option that needs one.
    pub fn text(&self) -> Result<&str> {
        self.value.as_deref().ok_or_else(|| self.err("needs a value (`OPTION=VALUE`)"))
    }

    /// A boolean as fio reads one: bare means true, else 0 or 1 (or true/false).
    pub fn flag(&self) -> Result<bool> {
        match self.value.as_deref().map(str::trim) {
            None | Some("1" | "true" | "yes" | "on") => Ok(true),
            Some("0" | "false" | "no" | "off") => Ok(false),
            Some(v) => Err(self.err(format!("`{v}` is not a boolean: expected 0 or 1"))),
        }
    }
}

/// One job: a section other than `[global]`, with the global options it inherits
/// followed by its own (an option appears once: the job's own value replaces the
/// global one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub name: String,
    pub at: Where,
    pub options: Vec<Opt>,
}

impl Job {
    pub fn get(&self, name: &str) -> Option<&Opt> {
        self.options.iter().find(|o| o.name == name)
    }

    fn set(&mut self, opt: Opt) {
        match self.options.iter_mut().find(|o| o.name == opt.name) {
            Some(old) => *old = opt,
            None => self.options.push(opt),
        }
    }
}

/// Whether `text` read from `path` is a fio job file rather than a scenario: it ends in
/// `.fio`, `.job` or `.ini`, or its first line that is not blank or a comment opens a
/// `[section]` (a scenario's YAML never does).
pub fn is_job_file(path: &Path, text: &str) -> bool {
    let by_name = path.extension().and_then(|e| e.to_str()).is_some_and(|e| ["fio", "job", "ini"].contains(&e));
    let first = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with(['#', ';']));
    by_name || first.is_some_and(|l| l.starts_with('[') && l.ends_with(']'))
}

/// How deep `include`s may nest (a file including itself is refused long before).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Reads the jobs of the job file at `path` (its text is `text`), in the order written.
pub fn read(path: &Path, text: &str) -> Result<Vec<Job>> {
    let mut lines = Vec::new();
    expand(path, text, 0, &mut lines)?;
    let mut globals = Job { name: "global".into(), at: Where { file: String::new(), line: 0 }, options: Vec::new() };
    let mut jobs: Vec<Job> = Vec::new();
    let mut in_global = false;
    for (at, line) in lines {
        if let Some(section) = line.strip_prefix('[') {
            let name = section
                .strip_suffix(']')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| Error::input(format!("{at}: `{line}`: expected a section `[NAME]`")))?;
            in_global = name == "global";
            if !in_global {
                if let Some(first) = jobs.iter().find(|j| j.name == name) {
                    return Err(Error::input(format!(
                        "{at}: [{name}]: a job of that name is already at {}: fathom names a workload after its job, so each needs its own",
                        first.at
                    )));
                }
                jobs.push(Job { name: name.to_string(), at: at.clone(), options: globals.options.clone() });
            }
            continue;
        }
        let (written, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(substitute(&at, k.trim(), v.trim())?)),
            None => (line.clone(), None),
        };
        let opt = Opt { name: canonical(&written), written, value, at: at.clone() };
        match jobs.last_mut() {
            _ if in_global => globals.set(opt),
            Some(job) => job.set(opt),
            None => {
                return Err(Error::input(format!(
                    "{at}: {}: an option before any section: fio job files start with `[global]` or `[JOB]`",
                    opt.written
                )));
            }
        }
    }
    if jobs.is_empty() {
        return Err(Error::input(format!("{}: no job: a job file needs a `[JOB]` section", path.display())));
    }
    Ok(jobs)
}

/// The file's lines that mean something (no blank lines, no comments), trimmed, with
/// every `include` replaced by the included file's lines, each with where it was written.
fn expand(path: &Path, text: &str, depth: usize, out: &mut Vec<(Where, String)>) -> Result<()> {
    let file = path.display().to_string();
    for (i, raw) in text.lines().enumerate() {
        let at = Where { file: file.clone(), line: i + 1 };
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let Some(included) = line.strip_prefix("include").filter(|r| r.starts_with(char::is_whitespace)) else {
            out.push((at, line.to_string()));
            continue;
        };
        let name = included.trim();
        let full: PathBuf = match Path::new(name).is_absolute() {
            true => PathBuf::from(name),
            false => path.parent().unwrap_or(Path::new(".")).join(name),
        };
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(Error::input(format!("{at}: include {name}: includes nest deeper than {MAX_INCLUDE_DEPTH}")));
        }
        let text = crate::nofollow::read_input(&full, "fio job file", crate::scenario::MAX_BYTES)
            .map_err(|e| Error::input(format!("{at}: include {name}: {e}")))?;
        expand(&full, &text, depth + 1, out)?;
    }
    Ok(())
}

/// The line without its comment: fio's comments start with `;` or `#`, at the start of
/// a line or after a blank.
fn strip_comment(line: &str) -> &str {
    let mut prev_blank = true;
    for (i, c) in line.char_indices() {
        if (c == ';' || c == '#') && prev_blank {
            return &line[..i];
        }
        prev_blank = c.is_whitespace();
    }
    line
}

/// `value` with `${VAR}` replaced from the environment and fio's own `$mb_memory`,
/// `$pagesize` and `$ncpus` by their figures for this machine.
fn substitute(at: &Where, key: &str, value: &str) -> Result<String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}').ok_or_else(|| Error::input(format!("{at}: {key}: `${{` without its `}}`")))?;
            let var = &braced[..end];
            let found = std::env::var(var)
                .map_err(|_| Error::input(format!("{at}: {key}: `${{{var}}}` is not set in the environment")))?;
            out.push_str(&found);
            rest = &braced[end + 1..];
            continue;
        }
        let name_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        let figure = match &after[..name_len] {
            "mb_memory" => crate::meminfo::bytes("MemTotal").map(|b| b / (1 << 20)),
            "pagesize" => Some(sysconf(libc::_SC_PAGESIZE)),
            "ncpus" => Some(sysconf(libc::_SC_NPROCESSORS_ONLN)),
            other => {
                return Err(Error::input(format!(
                    "{at}: {key}: `${other}`: fio's variables are $mb_memory, $pagesize and $ncpus; the environment's are written ${{NAME}}"
                )));
            }
        };
        let figure = figure.ok_or_else(|| Error::input(format!("{at}: {key}: cannot read this machine's memory")))?;
        out.push_str(&figure.to_string());
        rest = &after[name_len..];
    }
    out.push_str(rest);
    Ok(out)
}

fn sysconf(name: libc::c_int) -> u64 {
    // SAFETY: sysconf reads a configuration value; it has no memory effects.
    let v = unsafe { libc::sysconf(name) };
    v.max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(text: &str) -> Result<Vec<Job>> {
        read(Path::new("t.fio"), text)
    }

    fn value<'a>(job: &'a Job, name: &str) -> Option<&'a str> {
        job.get(name).and_then(|o| o.value.as_deref())
    }

    #[test]
    fn globals_are_inherited_and_overridden_and_a_later_global_applies_after_it() {
        let j = jobs("[global]\nbs=8k\nrw=randread\n[a]\nbs=4k\n[global]\niodepth=4\n[b]\n").unwrap();
        assert_eq!(
            (value(&j[0], "bs"), value(&j[0], "rw"), value(&j[0], "iodepth")),
            (Some("4k"), Some("randread"), None)
        );
        assert_eq!((value(&j[1], "bs"), value(&j[1], "iodepth")), (Some("8k"), Some("4")));
        assert_eq!(j[0].get("bs").unwrap().at.line, 5, "the job's own line");
    }

    #[test]
    fn comments_bare_options_and_aliases() {
        let j = jobs("; a comment\n# another\n[a]\nreadwrite=randrw ; inline\ntime_based\nblocksize = 16k\n").unwrap();
        assert_eq!(value(&j[0], "rw"), Some("randrw"));
        assert_eq!(j[0].get("rw").unwrap().written, "readwrite");
        assert_eq!(j[0].get("time_based").unwrap().value, None);
        assert!(j[0].get("time_based").unwrap().flag().unwrap());
        assert_eq!(value(&j[0], "bs"), Some("16k"));
    }

    #[test]
    fn variables_from_the_environment_and_fio() {
        // SAFETY: no other test of this binary reads or sets this variable.
        unsafe { std::env::set_var("FATHOM_TEST_FIO_BS", "64k") };
        let j = jobs("[a]\nbs=${FATHOM_TEST_FIO_BS}\nnumjobs=$ncpus\nsize=$pagesize*2\n").unwrap();
        assert_eq!(value(&j[0], "bs"), Some("64k"));
        assert!(value(&j[0], "numjobs").unwrap().parse::<u32>().unwrap() >= 1);
        assert!(value(&j[0], "size").unwrap().ends_with("*2"));
        let err = jobs("[a]\n\nbs=${FATHOM_TEST_NOT_SET_ANYWHERE}\n").unwrap_err().to_string();
        assert!(err.starts_with("t.fio:3: bs: `${FATHOM_TEST_NOT_SET_ANYWHERE}` is not set"), "{err}");
    }

    #[test]
    fn errors_are_located() {
        let err = jobs("bs=4k\n[a]\n").unwrap_err().to_string();
        assert!(err.starts_with("t.fio:1: bs: an option before any section"), "{err}");
        let err = jobs("[a]\n[a]\n").unwrap_err().to_string();
        assert!(err.starts_with("t.fio:2: [a]: a job of that name is already at t.fio:1"), "{err}");
        let err = jobs("[global]\nbs=4k\n").unwrap_err().to_string();
        assert!(err.contains("no job"), "{err}");
        let err = jobs("[a]\ninclude /no/such/file.fio\n").unwrap_err().to_string();
        assert!(err.starts_with("t.fio:2: include /no/such/file.fio:"), "{err}");
    }

    #[test]
    fn what_is_a_job_file() {
        assert!(is_job_file(Path::new("x.fio"), "name: y"));
        assert!(is_job_file(Path::new("x"), "; comment\n\n[global]\nbs=4k\n"));
        assert!(!is_job_file(Path::new("x.yaml"), "name: y\nworkloads: {}\n"));
    }
}
