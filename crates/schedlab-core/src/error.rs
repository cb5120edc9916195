//! The one error type of the core. Every variant has a stable code that the
//! Python binding maps onto one exception class (`schedlab.errors`).

use std::fmt;

/// Where in the input a problem was found: the file (or `<string>`) and the
/// dotted key path inside it (`task[1].program[0].run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub key: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// The text is not valid TOML/JSON at all.
    Syntax { file: String, message: String },
    /// A key the schema does not know.
    UnknownKey { at: Location, accepted: String },
    /// A key is present but its value is not acceptable.
    BadValue { at: Location, message: String, accepted: String },
    /// A key that must be there is missing.
    MissingKey { at: Location },
    /// Topology problems: unknown preset, inconsistent layout, affinity outside the machine.
    Topology { at: Location, message: String, accepted: String },
    /// Something the scenario asks for that schedlab does not model (yet).
    NotModelled { at: Location, what: String },
    /// The simulation reached a state the model forbids (invariant checker).
    Invariant { message: String },
    /// The run outgrew what it may take of the host: its heap passed the
    /// budget (engine::heap).
    Resource { message: String },
    /// A bug: an internal consistency failure, reported instead of a panic.
    Internal { message: String },
    /// The command line or an API argument is malformed (`--set x`).
    Usage { message: String },
}

impl SimError {
    /// Stable code: never renumber, only add.
    pub fn code(&self) -> &'static str {
        match self {
            SimError::Syntax { .. } => "SL100",
            SimError::UnknownKey { .. } => "SL101",
            SimError::BadValue { .. } => "SL102",
            SimError::MissingKey { .. } => "SL103",
            SimError::Topology { .. } => "SL110",
            SimError::NotModelled { .. } => "SL120",
            SimError::Invariant { .. } => "SL200",
            SimError::Resource { .. } => "SL210",
            SimError::Internal { .. } => "SL900",
            SimError::Usage { .. } => "SL001",
        }
    }

    /// The Python exception class this maps to (see python/schedlab/errors.py).
    pub fn kind(&self) -> &'static str {
        match self {
            SimError::Syntax { .. }
            | SimError::UnknownKey { .. }
            | SimError::BadValue { .. }
            | SimError::MissingKey { .. } => "ScenarioError",
            SimError::Topology { .. } => "TopologyError",
            SimError::NotModelled { .. } => "NotModelledError",
            SimError::Invariant { .. } => "InvariantError",
            SimError::Resource { .. } => "ResourceError",
            SimError::Internal { .. } => "InternalError",
            SimError::Usage { .. } => "UsageError",
        }
    }

    pub fn bad_value(file: &str, key: &str, message: impl Into<String>, accepted: impl Into<String>) -> Self {
        SimError::BadValue {
            at: Location { file: file.to_string(), key: key.to_string() },
            message: message.into(),
            accepted: accepted.into(),
        }
    }

    pub fn topology(file: &str, key: &str, message: impl Into<String>, accepted: impl Into<String>) -> Self {
        SimError::Topology {
            at: Location { file: file.to_string(), key: key.to_string() },
            message: message.into(),
            accepted: accepted.into(),
        }
    }

    pub fn not_modelled(file: &str, key: &str, what: impl Into<String>) -> Self {
        SimError::NotModelled { at: Location { file: file.to_string(), key: key.to_string() }, what: what.into() }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        SimError::Internal { message: message.into() }
    }
}

/// At most `max` characters of `s`, with `…` where it was cut: a message
/// echoes what the user wrote, and a megabyte-long key must not come back
/// whole.
pub fn cut(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(s),
        Some((i, _)) => std::borrow::Cow::Owned(format!("{}… ({} characters)", &s[..i], s.chars().count())),
    }
}

/// Longest key path, message and accepted list a message shows.
const KEY_MAX: usize = 120;
const MESSAGE_MAX: usize = 400;
const ACCEPTED_MAX: usize = 1000;

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = |at: &Location| cut(&at.key, KEY_MAX).into_owned();
        let msg = |m: &str| cut(m, MESSAGE_MAX).into_owned();
        let acc = |a: &str| cut(a, ACCEPTED_MAX).into_owned();
        match self {
            SimError::Syntax { file, message } => write!(f, "{file}: syntax error: {}", msg(message)),
            SimError::UnknownKey { at, accepted } => {
                write!(f, "{}: {}: unknown key; accepted here: {}", at.file, key(at), acc(accepted))
            }
            SimError::BadValue { at, message, accepted } => {
                write!(f, "{}: {}: {}; accepted: {}", at.file, key(at), msg(message), acc(accepted))
            }
            SimError::MissingKey { at } => write!(f, "{}: {}: required key is missing", at.file, key(at)),
            SimError::Topology { at, message, accepted } => {
                write!(f, "{}: {}: {}; accepted: {}", at.file, key(at), msg(message), acc(accepted))
            }
            SimError::NotModelled { at, what } => {
                write!(f, "{}: {}: not modelled by schedlab: {}", at.file, key(at), msg(what))
            }
            SimError::Invariant { message } => write!(f, "invariant violated: {}", acc(message)),
            SimError::Resource { message } => write!(f, "{}", acc(message)),
            SimError::Internal { message } => write!(f, "internal error (please report): {}", acc(message)),
            SimError::Usage { message } => write!(f, "{}", msg(message)),
        }
    }
}

impl std::error::Error for SimError {}

pub type Result<T, E = SimError> = std::result::Result<T, E>;
