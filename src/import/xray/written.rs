//! An X-Ray scenario as written (after rendering): every key X-Ray's `test.yml` has,
//! unknown ones refused with their line. Lists of one-key maps (`- OLTP: {...}`) are
//! kept as X-Ray writes them, in order.

use crate::scenario::yaml::Value;
use indexmap::IndexMap;
use serde::Deserialize;
use serde::de::IgnoredAny;

/// `test.yml`, rendered.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestFile {
    pub name: String,
    pub display_name: Option<String>,
    pub summary: Option<String>,
    /// HTML: the report shows it, sanitised (`description_html`).
    pub description: Option<String>,
    #[serde(rename = "tags")]
    pub _tags: Option<IgnoredAny>,
    /// Seconds; what a workload started without `runtime_secs` runs for.
    pub estimated_runtime: Option<Value>,
    /// Read before rendering ([`super::render`]); here only so the key is known.
    #[serde(rename = "vars")]
    pub _vars: Option<IgnoredAny>,
    pub vms: Option<Vec<IndexMap<String, VmGroup>>>,
    pub workloads: Option<Vec<IndexMap<String, WorkloadFile>>>,
    /// X-Ray's result views, each fathom's `results:` entry ([`crate::scenario::results`]).
    pub results: Option<Vec<IndexMap<String, ResultEntry>>>,
    pub setup: Option<Vec<StepFile>>,
    pub run: Option<Vec<StepFile>>,
    pub teardown: Option<Vec<StepFile>>,
    /// Preset var values the X-Ray UI offers; `--set` does their job here.
    #[serde(rename = "presets")]
    pub _presets: Option<IgnoredAny>,
}

/// A VM group: its VMs' shape (fathom's hosts are what they are: only `nodes` and the
/// counts place workers) and where they run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VmGroup {
    #[serde(rename = "template")]
    pub _template: Option<IgnoredAny>,
    #[serde(rename = "vcpus")]
    pub _vcpus: Option<IgnoredAny>,
    #[serde(rename = "ram_mb")]
    pub _ram_mb: Option<IgnoredAny>,
    #[serde(rename = "data_disks")]
    pub _data_disks: Option<IgnoredAny>,
    /// `0`, `1,2`, `0:3` (Python slices), or absent: every node.
    pub nodes: Option<Value>,
    pub count_per_node: Option<u32>,
    pub count_per_cluster: Option<u32>,
}

/// An X-Ray workload: a fio file run on every VM of a group.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadFile {
    pub vm_group: String,
    /// The fio file: a name, or a list of one (a var whose default is a list renders so).
    pub config_file: Value,
    /// Parameters of X-Ray's IO generator wrapper (e.g. `prefill`, `reporting_interval`).
    pub iogen_params: Option<Value>,
}

/// One `results:` entry: what X-Ray charts for a VM group (or one of its workloads),
/// and what it expects.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultEntry {
    pub vm_group: Option<String>,
    pub workload_name: Option<String>,
    /// The one workload of the group the result is of (X-Ray's name for it).
    pub workload_mask: Option<String>,
    /// `iops`, `latency`, `bandwidth`; `active`, `errors`, `generic` (a `query`).
    pub result_type: Option<String>,
    /// A hypervisor counter (`CpuUsage.Avg.Megahertz`) instead of the workloads'.
    pub metric: Option<String>,
    /// `sum` or `mean` over the group's VMs; absent: each VM its own line.
    pub aggregate: Option<String>,
    pub result_expected_value: Option<Value>,
    pub result_value_bands: Option<Vec<BandEntry>>,
    pub result_hint: Option<String>,
    /// X-Ray's sampling step (`30s`): fathom's series are per second.
    pub step: Option<Value>,
    /// A Prometheus query of X-Ray's own exporters (`result_type: generic`): not measured.
    #[serde(rename = "query")]
    pub _query: Option<IgnoredAny>,
    #[serde(rename = "report_group")]
    pub _report_group: Option<IgnoredAny>,
    #[serde(rename = "report_metrics")]
    pub _report_metrics: Option<IgnoredAny>,
}

/// A value band: rendered bounds may be numbers or numeric text.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BandEntry {
    pub name: String,
    pub lower: Value,
    pub upper: Value,
}

/// One step: `{STEP.NAME: {param: value, ...}}` (an empty or absent map for none).
pub type StepFile = IndexMap<String, Option<IndexMap<String, Value>>>;
