//! The discrete-event engine's ground floor: virtual time, the event queue
//! and the events it carries, RNG streams, the heap budget and progress.
//! Everything stands on it; it imports nothing of the kernel's rooms. The
//! simulation that owns the rooms and runs the loop is `sim/`.

pub mod event;
pub mod heap;
pub mod progress;
pub mod queue;
pub mod rng;
pub mod time;

pub use progress::Progress;
pub use queue::{EventKey, EventQueue};
pub use rng::Rng;
pub use time::{Duration, Instant};
