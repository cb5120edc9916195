//! Kernel versions and the mechanism eras they select.
//!
//! A scenario names `kernel.version`; that picks defaults for every
//! mechanism era, the sched_features and the tunables. Each can be
//! overridden in the scenario with the kernel's own names.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KernelVersion {
    pub major: u16,
    pub minor: u16,
    pub patch: u16,
}

/// The versions schedlab has presets for. Others between them are accepted
/// and take the preset of the newest listed version not above them.
pub const KNOWN_VERSIONS: &[&str] =
    &["2.6.24", "2.6.25", "2.6.35", "4.16", "4.19", "5.4", "5.5", "5.7", "6.1", "6.6", "6.12", "6.18"];

/// What `kernel.version` accepts, for error messages.
pub const ACCEPTED: &str = "a version from 2.6.23 through 7.x, as major.minor (the newest stable release) or \
     major.minor.patch (2.6.x for the 2.6 series); a minor newer than the newest modelled runs with a warning";

impl KernelVersion {
    pub const fn new(major: u16, minor: u16, patch: u16) -> Self {
        KernelVersion { major, minor, patch }
    }

    /// The patch level of a series named without one: "6.12" stands for
    /// the newest 6.12.y stable release, with every stable backport the
    /// model knows of (they are gated on the release that brought them,
    /// e.g. NI_RANDOM from 6.12.65); "6.12.0" is the first release. The
    /// 6.12 backports are read from Debian's 6.12.117. "6.18" likewise has
    /// every 6.18.y backport the model knows, read from the trees up to
    /// 6.18.35 (docs/notes/linux-6.13-6.18-sched-changes.md): it stands for
    /// 6.18.35 and later, such as the project machine's 6.18.44, whose
    /// 6.18.36 .. 6.18.44 changes were not read.
    pub const NEWEST_STABLE: u16 = u16::MAX;

    /// Parse "6.1" (the newest 6.1.y), "2.6.35" or "6.1.192".
    pub fn parse(s: &str) -> Option<Self> {
        Self::parse_why(s).ok()
    }

    /// What [`ACCEPTED`] says, for one version string: the version, or why
    /// it is refused.
    pub fn parse_why(s: &str) -> Result<Self, String> {
        let form = "not a version: accepted forms are major.minor (6.1), major.minor.patch (6.1.52) and 2.6.x";
        let parts: Vec<&str> = s.trim().split('.').collect();
        if parts.len() < 2 || parts.len() > 4 {
            return Err(form.into());
        }
        let mut nums = Vec::with_capacity(parts.len());
        for p in &parts {
            nums.push(p.parse::<u16>().map_err(|_| form.to_string())?);
        }
        let v = match (nums[0], nums.len()) {
            // 2.6.x: the third number is the "minor" that matters.
            (2, 3) | (2, 4) if nums[1] == 6 => KernelVersion::new(2, 6, nums[2]),
            (2, _) => return Err("before 2.6.23 there is no CFS to model".into()),
            (0 | 1, _) => return Err("before 2.6.23 there is no CFS to model".into()),
            (3..=7, 2) => KernelVersion::new(nums[0], nums[1], Self::NEWEST_STABLE),
            (3..=7, 3) => KernelVersion::new(nums[0], nums[1], nums[2]),
            (3..=7, _) => return Err(form.into()),
            (m, _) => return Err(format!("Linux {m}.x has not been released; the newest major modelled is 7")),
        };
        if v < KernelVersion::new(2, 6, 23) {
            return Err("CFS arrived in 2.6.23; nothing older is modelled".into());
        }
        Ok(v)
    }

    /// True if this version is at least `major.minor` (for 2.6.x use (2, 6, x)).
    pub fn at_least(&self, major: u16, minor: u16) -> bool {
        *self >= KernelVersion::new(major, minor, 0)
    }

    pub fn at_least_26(&self, x: u16) -> bool {
        *self >= KernelVersion::new(2, 6, x)
    }

    /// The version without its stable patch level (2.6.x keeps its x).
    fn series(&self) -> KernelVersion {
        if self.major == 2 {
            *self
        } else {
            KernelVersion::new(self.major, self.minor, Self::NEWEST_STABLE)
        }
    }

    /// None for a listed version (a stable update of one counts as it);
    /// else the note saying which listed version's mechanisms it runs with:
    /// the newest listed one not above it.
    pub fn unlisted_note(&self) -> Option<String> {
        let listed: Vec<KernelVersion> = KNOWN_VERSIONS.iter().filter_map(|v| KernelVersion::parse(v)).collect();
        if listed.contains(&self.series()) {
            return None;
        }
        let below = listed.iter().rev().find(|v| **v <= *self)?;
        let above = listed.iter().find(|v| **v > *self);
        Some(match above {
            Some(next) => format!(
                "kernel.version {self} is not a modelled version: it runs with the mechanisms of {below}, the newest modelled version below it (the next is {next}); the modelled versions are {}",
                KNOWN_VERSIONS.join(", ")
            ),
            None => format!(
                "kernel.version {self} is newer than every modelled version: it runs with the mechanisms of {below}; nothing merged after {below} is modelled"
            ),
        })
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.major == 2 {
            write!(f, "2.6.{}", self.patch)
        } else if self.patch == Self::NEWEST_STABLE {
            write!(f, "{}.{}", self.major, self.minor)
        } else {
            write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        let a = KernelVersion::parse("2.6.35").unwrap();
        let b = KernelVersion::parse("4.16").unwrap();
        let c = KernelVersion::parse("6.1.192").unwrap();
        assert!(a < b && b < c);
        assert_eq!(a.to_string(), "2.6.35");
        assert_eq!(b.to_string(), "4.16");
        assert!(KernelVersion::parse("2.6.22").is_none());
        assert!(KernelVersion::parse("six").is_none());
        assert!(c.at_least(6, 1) && !c.at_least(6, 6));
        // A series stands for its newest stable release; .0 is the first.
        let (first, newest) = (KernelVersion::parse("6.12.0").unwrap(), KernelVersion::parse("6.12").unwrap());
        assert!(first < KernelVersion::parse("6.12.95").unwrap() && KernelVersion::parse("6.12.95").unwrap() < newest);
        assert_eq!((first.to_string(), newest.to_string()), ("6.12.0".to_string(), "6.12".to_string()));
    }

    #[test]
    fn unlisted_versions_name_the_one_they_run_as() {
        let note = |v: &str| KernelVersion::parse(v).unwrap().unlisted_note();
        assert_eq!(note("6.1"), None);
        assert_eq!(note("6.1.192"), None);
        assert_eq!(note("2.6.35"), None);
        assert!(note("3.10").unwrap().contains("mechanisms of 2.6.35"));
        assert!(note("5.15").unwrap().contains("mechanisms of 5.7") && note("5.15").unwrap().contains("next is 6.1"));
        assert_eq!((note("6.18"), note("6.18.5")), (None, None));
        assert!(note("6.15").unwrap().contains("mechanisms of 6.12") && note("6.15").unwrap().contains("next is 6.18"));
        assert!(note("6.7.99").unwrap().contains("mechanisms of 6.6"));
        assert!(note("2.6.30").unwrap().contains("mechanisms of 2.6.25"));
        assert!(note("7.2").unwrap().contains("newer than every modelled version"));
    }
}
