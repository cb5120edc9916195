//! The discrete-event engine: virtual time, the event queue and RNG streams.

pub mod event;
pub mod heap;
pub mod progress;
pub mod queue;
pub mod rng;
pub mod run;
pub mod sim;
pub mod time;

pub use progress::Progress;
pub use queue::{EventKey, EventQueue};
pub use rng::Rng;
pub use time::{Duration, Instant};
