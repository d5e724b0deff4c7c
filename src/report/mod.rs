//! Presenting results: a run's summary gathered from the store, and terminal tables.

pub mod analysis;
pub mod expect;
pub mod format;
pub mod live;
pub mod summary;
pub mod table;
