//! Task programs and their interpreter state.

pub mod program;
pub mod rt_migrate_test;

pub use program::{Dist, Op, Program};
