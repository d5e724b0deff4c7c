//! Which fio options fathom reads, and how: their aliases, the options that change no
//! measurement (accepted, listed as ignored), and the ones fathom cannot honour (the
//! file is refused, naming them). What the supported ones become is in `mapping.rs`.

/// fio's alternative names (fio's HOWTO, "alias"), to the name fathom reads.
const ALIASES: &[(&str, &str)] = &[
    ("readwrite", "rw"),
    ("blocksize", "bs"),
    ("blocksize_range", "bsrange"),
    ("blockalign", "ba"),
    ("timeout", "runtime"),
    ("io_limit", "io_size"),
    ("wait_for_previous", "stonewall"),
    ("ratemin", "rate_min"),
    ("fill_fs", "fill_device"),
    ("iodepth_batch_submit", "iodepth_batch"),
];

/// The name fathom reads `name` as.
pub fn canonical(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase();
    ALIASES.iter().find(|(alias, _)| *alias == lower).map(|(_, to)| to.to_string()).unwrap_or(lower)
}

/// Options fathom maps (see `mapping.rs`; the docs' table lists what each becomes).
pub const SUPPORTED: &[&str] = &[
    "rw",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "bssplit",
    "iodepth",
    "size",
    "offset",
    "direct",
    "buffered",
    "rate_iops",
    "rate",
    "rate_process",
    "numjobs",
    "filename",
    "ioengine",
    "directory",
    "nrfiles",
    "random_distribution",
    "percentage_random",
    "norandommap",
    "randrepeat",
    "randseed",
    "refill_buffers",
    "buffer_compress_percentage",
    "dedupe_percentage",
    "zero_buffers",
    "fsync",
    "fdatasync",
    "verify",
    "time_based",
    "io_size",
    "loops",
    "number_ios",
    "runtime",
    "ramp_time",
    "stonewall",
    "wait_for",
    "new_group",
    "startdelay",
    "kb_base",
    "thinktime",
    "thinktime_blocks",
    "thinktime_spin",
    "bsrange",
    "filesize",
    "zonemode",
    "zonesize",
    "zonerange",
    "zoneskip",
];

/// Options that change what fio reports or how it behaves on errors, not what is
/// measured: accepted and listed once as ignored.
pub const IGNORED: &[&str] = &[
    "group_reporting",
    "disk_util",
    "continue_on_error",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "log_avg_msec",
    "log_hist_msec",
    "log_offset",
    "log_max_value",
    "per_job_logs",
    "thread",
    "name",
    "description",
    "do_verify",
    "verify_fatal",
    "verify_dump",
    "verify_backlog",
    "verify_interval",
    "verify_pattern",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "gtod_reduce",
    "invalidate",
    "scramble_buffers",
    "iodepth_batch",
    "iodepth_batch_complete",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "fadvise_hint",
    "unlink",
    "create_serialize",
    "allow_file_create",
    "exitall",
    "exitall_on_error",
    "clocksource",
    // fathom opens every target once, before the run: fio's limit on files open at a
    // time changes when fio opens and closes them, not the IO each one gets
    "openfiles",
    // which generator draws the random offsets (tausworthe, lfsr): each covers the range
    // uniformly, as fathom's does, so the IO measured is alike
    "random_generator",
];

/// Engines fio has and fathom does not: the file is refused for them.
pub fn engine_refusal(engine: &str) -> String {
    format!(
        "fathom's engine runs io_uring, libaio, posixaio, psync, sync, pvsync, pvsync2, mmap and null jobs; `{engine}` is an engine of fio's only"
    )
}

/// Why fathom refuses an option it knows, if it does.
pub fn refusal(name: &str) -> Option<&'static str> {
    Some(match name {
        "ba" => "block alignment other than the block size is not in fathom's model",
        "filename_format" | "file_service_type" => "fathom names its files and shares one queue among them",
        "flow" | "flow_id" => "relative pacing between jobs is not in fathom's model",
        "rate_min" | "rate_iops_min" | "ratecycle" => "fathom asks a rate and measures what was achieved; no minimum",
        "buffer_pattern" | "dedupe_mode" => {
            "fathom writes its own data patterns (compress_percent, dedupe_percent, zero)"
        }
        "offset_increment" => "per-job offsets are not in fathom's model",
        "cpus_allowed" | "cpumask" | "numa_cpu_nodes" | "numa_mem_policy" => "fathom does not pin workers",
        "sync" | "dsync" | "o_sync" => "O_SYNC writes are not in fathom's model (use fsync=1)",
        "fill_device" => "filling the device is not in fathom's model",
        "trim_percentage" | "trim_backlog" | "trim_verify_zero" => "fathom does not trim",
        "latency_target" | "latency_window" | "latency_percentile" | "latency_run" => {
            "fio's search for the depth that meets a latency target is not in fathom's model (`fathom sweep` \
             steps iodepth, and the curve shows the latency at each)"
        }
        _ => return None,
    })
}
