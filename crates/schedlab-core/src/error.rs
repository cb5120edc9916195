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

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Syntax { file, message } => write!(f, "{file}: syntax error: {message}"),
            SimError::UnknownKey { at, accepted } => {
                write!(f, "{}: {}: unknown key; accepted here: {accepted}", at.file, at.key)
            }
            SimError::BadValue { at, message, accepted } => {
                write!(f, "{}: {}: {message}; accepted: {accepted}", at.file, at.key)
            }
            SimError::MissingKey { at } => write!(f, "{}: {}: required key is missing", at.file, at.key),
            SimError::Topology { at, message, accepted } => {
                write!(f, "{}: {}: {message}; accepted: {accepted}", at.file, at.key)
            }
            SimError::NotModelled { at, what } => {
                write!(f, "{}: {}: not modelled by schedlab: {what}", at.file, at.key)
            }
            SimError::Invariant { message } => write!(f, "invariant violated: {message}"),
            SimError::Internal { message } => write!(f, "internal error (please report): {message}"),
            SimError::Usage { message } => write!(f, "{message}"),
        }
    }
}

impl std::error::Error for SimError {}

pub type Result<T, E = SimError> = std::result::Result<T, E>;
