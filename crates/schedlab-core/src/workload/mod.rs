//! Task programs and their interpreter state.

pub mod program;

pub use program::{Dist, Op, Program};
