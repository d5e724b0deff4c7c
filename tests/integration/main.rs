//! Every integration test, in one binary: its test threads are shared by all the files,
//! so one file's slow tests do not hold the others back, and it is linked once.
//! Each test runs the real `fathom` binary (or a real program beside it) in a scratch
//! directory of its own (see `common`).

mod common;

mod bounded;
mod budget;
mod build_identity;
mod builtins;
mod clusters;
mod completions;
mod curve;
mod data_content;
mod databases;
mod fidelity;
mod fio_driver;
mod fio_engine_jobfile;
mod fio_job_files;
mod fio_zones;
mod fit;
mod fuzz_imports;
mod fuzz_scenarios;
mod hammerdb;
mod helpful_errors;
mod hooks;
mod host_targets;
mod hostile_agents;
mod hosts;
mod imports;
mod input_files;
mod interrupt;
mod iperf3;
mod kubectl;
mod lint;
mod live_view;
mod observe;
mod pgbench;
mod phases;
mod prometheus;
mod report;
mod results;
mod run;
mod safety_fs;
mod scaling;
mod scenario_errors;
mod secrets;
mod shape;
mod store;
mod sysbench;
mod terminal_width;
mod timeline;
mod tpcc;
mod tpcc_mariadb;
mod tpch;
mod views;
mod xray;
