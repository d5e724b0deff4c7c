//! Pure functions that turn samples into knowledge. Each is tested on its own.

pub mod interference;
pub mod knee;
pub mod lint;
pub mod noise;
pub mod spread;
pub mod stalls;
pub mod steady_state;
mod student;
pub mod usl;
