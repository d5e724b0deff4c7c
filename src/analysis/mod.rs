//! Pure functions that turn samples into knowledge. Each is tested on its own.

pub mod lint;
pub mod littles_law;
