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
    /// The `include` line that brought this file in: the user fixes the file they ran,
    /// so an error inside an included file names the line that included it.
    pub via: Option<Box<Where>>,
}

impl Where {
    /// A place with no `include` leading to it.
    pub fn at(file: impl Into<String>, line: usize) -> Where {
        Where { file: file.into(), line, via: None }
    }
}

impl fmt::Display for Where {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => write!(f, "{}", self.file)?,
            line => write!(f, "{}:{line}", self.file)?,
        }
        match &self.via {
            Some(via) => write!(f, " (included at {via})"),
            None => Ok(()),
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

/// How deep `include`s may nest: a file including itself stops here, not at the stack's end.
const MAX_INCLUDE_DEPTH: usize = 16;

/// How many lines (not blank, not comments) a job file with its includes may hold.
/// Files including each other ten times over would otherwise expand to 10^9 lines.
const MAX_LINES: usize = 100_000;

/// How many bytes of included files may be read in all: an include of a 1 MiB file of
/// blank lines counts few lines, yet repeated it would take minutes to read.
const MAX_INCLUDED_BYTES: usize = 16 << 20;

/// Reads the jobs of the job file at `path` (its text is `text`), in the order written.
pub fn read(path: &Path, text: &str) -> Result<Vec<Job>> {
    let mut expansion = Expansion { root: None, lines: Vec::new(), bytes: 0 };
    expansion.expand(path, text, None, 0)?;
    let lines = expansion.lines;
    let mut globals = Job { name: "global".into(), at: Where::at("", 0), options: Vec::new() };
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
                // refused rather than renamed: `--set JOB.key`, expectations and fio's own
                // files (`JOB.0.0`) know the job by the name written
                crate::scenario::text::file_name_part(name).map_err(|why| {
                    Error::input(format!("{at}: [NAME]: {why} (fathom names a workload and its files after its job)"))
                })?;
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

/// A job file's lines with its includes in place, and what the includes used so far
/// of the bounds on them.
struct Expansion {
    /// The top-level job file's directory with symbolic links resolved, once known.
    root: Option<PathBuf>,
    lines: Vec<(Where, String)>,
    bytes: usize,
}

impl Expansion {
    /// Adds the file's lines that mean something (no blank lines, no comments),
    /// trimmed, with every `include` replaced by the included file's lines, each with
    /// where it was written; `via` is the `include` line that brought this file in.
    fn expand(&mut self, path: &Path, text: &str, via: Option<&Where>, depth: usize) -> Result<()> {
        let file = path.display().to_string();
        for (i, raw) in text.lines().enumerate() {
            let line = strip_comment(raw).trim();
            if line.is_empty() {
                continue;
            }
            let at = Where { file: file.clone(), line: i + 1, via: via.map(|v| Box::new(v.clone())) };
            if self.lines.len() >= MAX_LINES {
                return Err(Error::input(format!(
                    "{at}: the job file with its includes passes {MAX_LINES} lines: an include that multiplies is refused"
                )));
            }
            let Some(included) = line.strip_prefix("include").filter(|r| r.starts_with(char::is_whitespace)) else {
                self.lines.push((at, line.to_string()));
                continue;
            };
            let name = included.trim();
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(Error::input(format!(
                    "{at}: include {name}: includes nest deeper than {MAX_INCLUDE_DEPTH}"
                )));
            }
            let real = self.confined(path, name).map_err(|e| Error::input(format!("{at}: include {name}: {e}")))?;
            let text = crate::nofollow::read_input(&real, "fio job file", crate::scenario::MAX_BYTES)
                .map_err(|e| Error::input(format!("{at}: include {name}: {e}")))?;
            self.bytes += text.len();
            if self.bytes > MAX_INCLUDED_BYTES {
                let mib = MAX_INCLUDED_BYTES >> 20;
                return Err(Error::input(format!("{at}: include {name}: the included files pass {mib} MiB in all")));
            }
            // named as written, so its errors name the file the user knows
            let shown = path.parent().unwrap_or(Path::new("")).join(name);
            self.expand(&shown, &text, Some(&at), depth + 1)?;
        }
        Ok(())
    }

    /// The file `name` included from the file at `path`, if it is inside the top-level
    /// job file's directory (its `root`). The first include met is the top-level file's,
    /// so its directory is the root.
    fn confined(&mut self, path: &Path, name: &str) -> std::result::Result<PathBuf, String> {
        let root = match self.root.take() {
            Some(root) => root,
            None => {
                let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?
            }
        };
        let real = crate::nofollow::confined(&root, path, name, "the job file's directory");
        self.root = Some(root);
        real
    }
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

/// The `$` names fio expands itself in `filename_format`, per job and file: they are
/// kept as written for fio, not read as variables here.
const FILENAME_FORMAT_NAMES: [&str; 4] = ["jobname", "jobnum", "filenum", "clientuid"];

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
            name if canonical(key) == "filename_format" && FILENAME_FORMAT_NAMES.contains(&name) => {
                out.push('$');
                out.push_str(name);
                rest = &after[name_len..];
                continue;
            }
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
    fn filename_format_keeps_the_names_fio_expands_itself() {
        let j = jobs("[a]\nfilename_format=$jobname.$jobnum.$filenum.$clientuid\n").unwrap();
        assert_eq!(value(&j[0], "filename_format"), Some("$jobname.$jobnum.$filenum.$clientuid"));
        // elsewhere they are no variable of fio's, and are refused as before
        let err = jobs("[a]\nfilename=$jobname\n").unwrap_err().to_string();
        assert!(err.starts_with("t.fio:2: filename: `$jobname`: fio's variables are"), "{err}");
    }

    #[test]
    fn a_place_in_an_included_file_names_the_include_line() {
        let top = Where::at("job.fio", 2);
        let mid = Where { file: "mid.fio".into(), line: 1, via: Some(Box::new(top)) };
        let inner = Where { file: "inc.fio".into(), line: 3, via: Some(Box::new(mid)) };
        assert_eq!(inner.to_string(), "inc.fio:3 (included at mid.fio:1 (included at job.fio:2))");
        assert_eq!(Where::at("--set bs=4k", 0).to_string(), "--set bs=4k");
    }

    #[test]
    fn what_is_a_job_file() {
        assert!(is_job_file(Path::new("x.fio"), "name: y"));
        assert!(is_job_file(Path::new("x"), "; comment\n\n[global]\nbs=4k\n"));
        assert!(!is_job_file(Path::new("x.yaml"), "name: y\nworkloads: {}\n"));
    }
}
