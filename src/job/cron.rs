//! The `schedule:` of a job: a five-field cron line read in an IANA time zone, and what to do
//! about runs missed while no scheduler was up.
//!
//! Parsing and the next-occurrence search come from `croner`, connected to jiff 1.0 through
//! croner's `CronDateTime` trait (croner's own jiff support targets jiff 0.2). Daylight saving
//! time follows croner's rules: a wall-clock time that a spring-forward skips runs at the first
//! instant after the gap; a fixed time that a fall-back repeats runs once. Aliases such as
//! `@daily` are expanded to five fields here, so `Schedule::cron` is always five fields and
//! can be handed to GitHub or Kubernetes as it is.

use std::cmp::Ordering;

use croner::errors::CronError;
use croner::parser::{CronParser, Seconds, Year};
use croner::{CivilDate, CivilDateTime, CivilTime, CronDateTime, Resolution, Weekday};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp, ZonedDateTime};

pub use super::file::Missed;
use super::file::ScheduleSection;

/// When `cn-run schedule` starts a job (resolved from the job file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Five fields: minute, hour, day of month, month, day of week.
    pub cron: String,
    /// An IANA time zone name; `UTC` by default.
    pub timezone: String,
    pub missed: Missed,
}

impl Schedule {
    /// The cron line compiled with its time zone.
    pub fn compile(&self) -> Result<CronTab, CronLineError> {
        CronTab::new(&self.cron, &self.timezone)
    }

    /// True when the schedule is read in UTC (GitHub's cron knows no other zone).
    pub fn is_utc(&self) -> bool {
        matches!(
            self.timezone.as_str(),
            "UTC" | "Etc/UTC" | "Etc/UCT" | "UCT" | "Etc/Universal" | "Universal" | "Etc/Zulu"
        ) || self.timezone.eq_ignore_ascii_case("utc")
    }
}

/// Why a `schedule:` cannot be read (located by the job loader: `schedule.cron`,
/// `schedule.timezone`).
#[derive(Debug, thiserror::Error)]
pub enum CronLineError {
    #[error("`{0}` is not a known alias (use @hourly, @daily, @weekly, @monthly or @yearly)")]
    UnknownAlias(String),
    #[error(
        "`{line}` has {count} fields; a cron line has 5: minute hour day-of-month month \
         day-of-week (seconds and years are not supported)"
    )]
    FieldCount { line: String, count: usize },
    #[error("`{line}` is not a valid cron line: {source}")]
    Invalid { line: String, source: CronError },
    #[error("`{name}` is not a known IANA time zone (e.g. UTC, Europe/Berlin): {source}")]
    TimeZone { name: String, source: jiff::Error },
}

/// A parsed cron line in a time zone: it answers "when next?".
#[derive(Debug, Clone)]
pub struct CronTab {
    cron: croner::Cron,
    tz: TimeZone,
}

impl CronTab {
    /// Parse `cron` (five fields, or an `@` alias) and look up `timezone`.
    pub fn new(cron: &str, timezone: &str) -> Result<CronTab, CronLineError> {
        let fields = expand_alias(cron)?;
        let parsed = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build()
            .parse(&fields)
            .map_err(|source| CronLineError::Invalid {
                line: cron.to_owned(),
                source,
            })?;
        let tz = zone(timezone)?;
        Ok(CronTab { cron: parsed, tz })
    }

    /// The first occurrence strictly after `t`, or `None` if there is none in reach.
    pub fn next_after(&self, t: Timestamp) -> Option<ZonedDateTime> {
        let start = Zdt(t.to_zoned_datetime(self.tz.clone()));
        self.cron
            .find_next_occurrence(&start, false)
            .ok()
            .map(|z| z.0)
    }

    /// The next `n` occurrences after `t`.
    pub fn upcoming(&self, t: Timestamp, n: usize) -> Vec<ZonedDateTime> {
        let mut out = Vec::with_capacity(n);
        let mut at = t;
        while out.len() < n {
            match self.next_after(at) {
                Some(z) => {
                    at = z.timestamp();
                    out.push(z);
                }
                None => break,
            }
        }
        out
    }

    /// The last occurrence at or before `t`, if any in reach.
    pub fn last_at_or_before(&self, t: Timestamp) -> Option<ZonedDateTime> {
        let start = Zdt(t.to_zoned_datetime(self.tz.clone()));
        self.cron
            .find_previous_occurrence(&start, true)
            .ok()
            .map(|z| z.0)
    }
}

/// The time zone called `name`; UTC needs no time-zone database.
fn zone(name: &str) -> Result<TimeZone, CronLineError> {
    if name.eq_ignore_ascii_case("utc") || name == "Etc/UTC" {
        return Ok(TimeZone::UTC);
    }
    TimeZone::get(name).map_err(|source| CronLineError::TimeZone {
        name: name.to_owned(),
        source,
    })
}

/// Five fields for a cron line, expanding the `@` aliases cron implementations share.
fn expand_alias(cron: &str) -> Result<String, CronLineError> {
    let t = cron.trim();
    let expanded = match t.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        other if other.starts_with('@') => {
            return Err(CronLineError::UnknownAlias(t.to_owned()));
        }
        _ => {
            let n = t.split_whitespace().count();
            if n != 5 {
                return Err(CronLineError::FieldCount {
                    line: t.to_owned(),
                    count: n,
                });
            }
            return Ok(t.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    };
    Ok(expanded.to_owned())
}

/// Resolve the raw `schedule:`; each problem goes to `push(field, message)`.
pub(super) fn resolve(
    raw: Option<&ScheduleSection>,
    mut push: impl FnMut(&str, String),
) -> Option<Schedule> {
    let (cron, timezone, missed, cron_field) = match raw? {
        ScheduleSection::Cron(c) => (c.clone(), None, None, "schedule"),
        ScheduleSection::Spec(s) => (
            s.cron.clone(),
            s.timezone.clone(),
            s.missed,
            "schedule.cron",
        ),
    };
    let timezone = timezone.unwrap_or_else(|| "UTC".to_owned());
    let mut ok = true;
    let fields = match expand_alias(&cron) {
        Ok(f) => f,
        Err(e) => {
            push(cron_field, e.to_string());
            return None;
        }
    };
    if let Err(e) = CronTab::new(&fields, "UTC") {
        push(cron_field, e.to_string());
        ok = false;
    }
    if let Err(e) = zone(&timezone) {
        push("schedule.timezone", e.to_string());
        ok = false;
    }
    ok.then(|| Schedule {
        cron: fields,
        timezone,
        missed: missed.unwrap_or_default(),
    })
}

/// jiff 1.0's zoned date-time, as croner's search needs it.
#[derive(Debug, Clone)]
struct Zdt(ZonedDateTime);

fn to_jiff(c: CivilDateTime) -> Result<jiff::civil::DateTime, CronError> {
    let year = i16::try_from(c.year()).map_err(|_| CronError::InvalidDate)?;
    let small = |v: u32| i8::try_from(v).map_err(|_| CronError::InvalidDate);
    jiff::civil::DateTime::new(
        year,
        small(c.month())?,
        small(c.day())?,
        small(c.hour())?,
        small(c.minute())?,
        small(c.second())?,
        0,
    )
    .map_err(|_| CronError::InvalidDate)
}

fn part(v: i8) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

impl CronDateTime for Zdt {
    fn to_civil(&self) -> CivilDateTime {
        let d = self.0.datetime();
        CivilDateTime::new(
            CivilDate::from_parts_unchecked(i32::from(d.year()), part(d.month()), part(d.day())),
            CivilTime::from_parts_unchecked(part(d.hour()), part(d.minute()), part(d.second())),
        )
    }

    fn civil_weekday(&self) -> Weekday {
        Weekday::from_days_from_sunday(part(self.0.weekday().to_sunday_zero_offset()))
    }

    fn resolve_civil(&self, civil: CivilDateTime) -> Result<Resolution<Self>, CronError> {
        let dt = to_jiff(civil)?;
        let amb = self.0.time_zone().to_ambiguous_zoned_datetime(dt);
        let bad = |_| CronError::InvalidTime;
        Ok(match amb.offset() {
            AmbiguousOffset::Unambiguous { .. } => {
                Resolution::Single(Zdt(amb.unambiguous().map_err(bad)?))
            }
            AmbiguousOffset::Fold { .. } => {
                let earlier = Zdt(amb.clone().earlier().map_err(bad)?);
                Resolution::Ambiguous(earlier, Zdt(amb.later().map_err(bad)?))
            }
            AmbiguousOffset::Gap { .. } => Resolution::Gap,
        })
    }

    fn checked_add_seconds(&self, seconds: i64) -> Option<Self> {
        self.0
            .checked_add(SignedDuration::from_secs(seconds))
            .ok()
            .map(Zdt)
    }

    fn cmp_instant(&self, other: &Self) -> Ordering {
        self.0.timestamp().cmp(&other.0.timestamp())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn aliases_expand_and_field_counts_are_checked() {
        assert_eq!(expand_alias("@daily").unwrap(), "0 0 * * *");
        assert_eq!(expand_alias(" 0  3 * * 1 ").unwrap(), "0 3 * * 1");
        assert!(
            expand_alias("0 0 3 * * 1")
                .unwrap_err()
                .to_string()
                .contains("6 fields")
        );
        assert!(expand_alias("@reboot").is_err());
    }

    #[test]
    fn next_after_is_strict_and_in_the_zone() {
        let tab = CronTab::new("0 3 * * 1", "Europe/Berlin").unwrap();
        // Monday 2025-01-06 03:00 in Berlin is 02:00 UTC.
        let next = tab.next_after(ts("2025-01-06T01:00:00Z")).unwrap();
        assert_eq!(next.timestamp(), ts("2025-01-06T02:00:00Z"));
        let after = tab.next_after(next.timestamp()).unwrap();
        assert_eq!(after.timestamp(), ts("2025-01-13T02:00:00Z"));
    }

    #[test]
    fn a_time_in_the_spring_gap_runs_right_after_it() {
        // 2025-03-30 02:30 does not exist in Berlin (02:00 → 03:00).
        let tab = CronTab::new("30 2 * * *", "Europe/Berlin").unwrap();
        let next = tab.next_after(ts("2025-03-29T23:00:00Z")).unwrap();
        assert_eq!(next.timestamp(), ts("2025-03-30T01:00:00Z"));
    }
}
