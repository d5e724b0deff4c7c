//! Drivers that run another program for a workload and turn what it reports into
//! fathom's samples, so its results sit in the same store next to the native engine's.

pub mod fio;
