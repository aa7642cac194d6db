//! The `schedule:` of a job: a cron line read in an IANA time zone, and what to do about
//! runs missed while no scheduler was up.
//!
//! One dialect, Debian's cron (Vixie cron 3.0, as `crontab(5)` on Debian describes it): five
//! fields of numbers, names, `*`, lists, ranges and steps, the `@` aliases, and its two rules
//! that other parsers get wrong — a day field that starts with `*` makes both day fields count
//! (`line`), and daylight saving time is read by the shape of the line (`search`). What
//! Debian's cron would read silently wrong is refused with the reason (`field`). Aliases are
//! expanded to five fields here, so `Schedule::cron` is always five fields; `CronTab::portable`
//! gives the form the export targets read the same way (`portable`).

mod field;
mod line;
mod portable;
mod search;

use jiff::tz::TimeZone;
use jiff::{Timestamp, ZonedDateTime};

use line::CronLine;
pub use portable::NotPortable;

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
/// `schedule.timezone`). Each message names the line, the field, the value and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronLineError {
    #[error("`{line}` {why}")]
    Alias { line: String, why: String },
    #[error(
        "`{line}` has {count} fields; a cron line has 5: minute hour day-of-month month \
         day-of-week (seconds and years are not supported)"
    )]
    FieldCount { line: String, count: usize },
    #[error("`{line}` is not a valid cron line: the {field} field `{text}`: {why}")]
    Field {
        line: String,
        field: &'static str,
        text: String,
        why: String,
    },
    #[error(
        "`{line}` can never fire: {why} (the two day fields are read together when one \
         of them starts with `*`)"
    )]
    NeverFires { line: String, why: String },
    #[error("`{name}` is not a known IANA time zone (e.g. UTC, Europe/Berlin): {message}")]
    TimeZone { name: String, message: String },
}

/// A parsed cron line in a time zone: it answers "when next?".
#[derive(Debug, Clone)]
pub struct CronTab {
    line: CronLine,
    tz: TimeZone,
}

impl CronTab {
    /// Parse `cron` (five fields, or an `@` alias) and look up `timezone`.
    pub fn new(cron: &str, timezone: &str) -> Result<CronTab, CronLineError> {
        let line = CronLine::parse(cron)?;
        let tz = zone(timezone)?;
        Ok(CronTab { line, tz })
    }

    /// The first occurrence strictly after `t`, or `None` if there is none in reach.
    pub fn next_after(&self, t: Timestamp) -> Option<ZonedDateTime> {
        search::next_after(&self.line, &self.tz, t).map(|at| at.to_zoned_datetime(self.tz.clone()))
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
        search::last_at_or_before(&self.line, &self.tz, t)
            .map(|at| at.to_zoned_datetime(self.tz.clone()))
    }

    /// The line as GitHub Actions and Kubernetes read it to the same effect, or why no
    /// line can say the same there.
    pub fn portable(&self) -> Result<String, NotPortable> {
        portable::portable(&self.line)
    }
}

/// The time zone called `name`; UTC needs no time-zone database.
fn zone(name: &str) -> Result<TimeZone, CronLineError> {
    if name.eq_ignore_ascii_case("utc") || name == "Etc/UTC" {
        return Ok(TimeZone::UTC);
    }
    TimeZone::get(name).map_err(|e| CronLineError::TimeZone {
        name: name.to_owned(),
        message: e.to_string(),
    })
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
    let fields = match CronLine::parse(&cron) {
        Ok(line) => line.fields.join(" "),
        Err(e) => {
            push(cron_field, e.to_string());
            ok = false;
            String::new()
        }
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn aliases_expand_as_debian_spells_them_and_field_counts_are_checked() {
        assert_eq!(line::expand("@daily").unwrap(), "0 0 * * *");
        assert_eq!(line::expand("@annually").unwrap(), "0 0 1 1 *");
        assert_eq!(line::expand(" 0  3 * * 1 ").unwrap(), "0 3 * * 1");
        let six = line::expand("0 0 3 * * 1").unwrap_err().to_string();
        assert!(six.contains("6 fields"), "{six}");
        let reboot = line::expand("@reboot").unwrap_err().to_string();
        assert!(reboot.contains("no such moment"), "{reboot}");
        let upper = line::expand("@DAILY").unwrap_err().to_string();
        assert!(upper.contains("write `@daily`"), "{upper}");
        assert!(line::expand("@every").is_err());
    }

    #[test]
    fn next_after_is_strict_and_in_the_zone() {
        let tab = CronTab::new("0 3 * * 1", "Europe/Berlin").unwrap();
        // Monday 2025-01-06 03:00 in Berlin is 02:00 UTC.
        let next = tab.next_after(ts("2025-01-06T01:00:00Z")).unwrap();
        assert_eq!(next.timestamp(), ts("2025-01-06T02:00:00Z"));
        let after = tab.next_after(next.timestamp()).unwrap();
        assert_eq!(after.timestamp(), ts("2025-01-13T02:00:00Z"));
        let last = tab.last_at_or_before(ts("2025-01-13T02:00:00Z")).unwrap();
        assert_eq!(last.timestamp(), ts("2025-01-13T02:00:00Z"));
        let last = tab.last_at_or_before(ts("2025-01-13T01:59:59Z")).unwrap();
        assert_eq!(last.timestamp(), ts("2025-01-06T02:00:00Z"));
    }
}
