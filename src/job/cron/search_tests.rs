use super::*;

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// The next `n` instants after `from`, in UTC.
fn runs(line: &str, zone: &str, from: &str, n: usize) -> Vec<String> {
    let line = CronLine::parse(line).unwrap();
    let tz = TimeZone::get(zone).unwrap();
    let mut at = ts(from);
    let mut out = Vec::new();
    for _ in 0..n {
        at = next_after(&line, &tz, at).unwrap();
        out.push(at.to_string());
    }
    out
}

#[test]
fn fixed_times_on_the_spring_forward_night_run_once_at_the_end_of_the_gap() {
    // Berlin, 30 March 2025: 02:00 CET becomes 03:00 CEST (01:00 UTC).
    assert_eq!(
        runs("30 2,14 * * *", "Europe/Berlin", "2025-03-29T12:00:00Z", 4),
        [
            "2025-03-29T13:30:00Z", // 14:30 CET
            "2025-03-30T01:00:00Z", // 02:30 does not exist: 03:00 CEST
            "2025-03-30T12:30:00Z", // 14:30 CEST
            "2025-03-31T00:30:00Z",
        ]
    );
    // Two times in the same gap share the one run at its end.
    assert_eq!(
        runs("0,30 1-3 * * *", "Europe/Berlin", "2025-03-29T23:59:00Z", 4),
        [
            "2025-03-30T00:00:00Z", // 01:00 CET
            "2025-03-30T00:30:00Z", // 01:30 CET
            "2025-03-30T01:00:00Z", // 02:00 and 02:30 (gap) and 03:00 CEST
            "2025-03-30T01:30:00Z", // 03:30 CEST
        ]
    );
}

#[test]
fn fixed_times_on_the_fall_back_night_run_once_at_their_first_pass() {
    // New York, 2 November 2025: 02:00 EDT becomes 01:00 EST; 01:30 comes twice.
    assert_eq!(
        runs(
            "30 1,13 * * *",
            "America/New_York",
            "2025-11-01T12:00:00Z",
            3
        ),
        [
            "2025-11-01T17:30:00Z", // 13:30 EDT
            "2025-11-02T05:30:00Z", // 01:30 EDT, and not 01:30 EST
            "2025-11-02T18:30:00Z", // 13:30 EST
        ]
    );
    // Asked from inside the second pass, the next run is the next day's.
    assert_eq!(
        runs("30 1 * * *", "America/New_York", "2025-11-02T06:10:00Z", 1),
        ["2025-11-03T06:30:00Z"]
    );
}

#[test]
fn lines_starting_with_a_star_follow_elapsed_time() {
    // Hourly at :30 in Berlin: nothing for the skipped 02:30, no extra run at 03:00.
    assert_eq!(
        runs("30 * * * *", "Europe/Berlin", "2025-03-30T00:00:00Z", 2),
        ["2025-03-30T00:30:00Z", "2025-03-30T01:30:00Z"]
    );
    // Every 30 minutes through New York's repeated hour: both passes run.
    assert_eq!(
        runs(
            "*/30 * * * *",
            "America/New_York",
            "2025-11-02T05:00:00Z",
            4
        ),
        [
            "2025-11-02T05:30:00Z", // 01:30 EDT
            "2025-11-02T06:00:00Z", // 01:00 EST
            "2025-11-02T06:30:00Z", // 01:30 EST
            "2025-11-02T07:00:00Z", // 02:00 EST
        ]
    );
}

#[test]
fn half_hour_shifts_and_midnight_gaps() {
    // Lord Howe, 5 October 2025: 02:00 (+10:30) becomes 02:30 (+11) at 15:30 UTC.
    assert_eq!(
        runs(
            "15 2 * * *",
            "Australia/Lord_Howe",
            "2025-10-04T12:00:00Z",
            1
        ),
        ["2025-10-04T15:30:00Z"]
    );
    // Santiago, 7 September 2025: midnight (-4) becomes 01:00 (-3); the daily midnight
    // run goes to 01:00 that day, and a weekday line still sees the same date.
    assert_eq!(
        runs("0 0 * * *", "America/Santiago", "2025-09-06T12:00:00Z", 2),
        ["2025-09-07T04:00:00Z", "2025-09-08T03:00:00Z"]
    );
    assert_eq!(
        runs("0 0 * * 0", "America/Santiago", "2025-09-01T12:00:00Z", 1),
        ["2025-09-07T04:00:00Z"]
    );
}

#[test]
fn rare_days_are_found_and_the_day_fields_combine_as_in_debian() {
    assert_eq!(
        runs("0 0 29 2 *", "UTC", "2025-01-01T00:00:00Z", 2),
        ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"]
    );
    // 29 February on a Sunday: 2032, then 2060.
    assert_eq!(
        runs("0 0 29 2 */7", "UTC", "2025-01-01T00:00:00Z", 2),
        ["2032-02-29T00:00:00Z", "2060-02-29T00:00:00Z"]
    );
    // `*/1` in the day of month: Mondays only (1 December 2025 is a Monday).
    assert_eq!(
        runs("0 0 */1 * 1", "UTC", "2025-11-30T00:00:00Z", 2),
        ["2025-12-01T00:00:00Z", "2025-12-08T00:00:00Z"]
    );
    // Neither starts with `*`: the 13th or a Friday.
    assert_eq!(
        runs("0 0 13 * 5", "UTC", "2025-06-10T00:00:00Z", 3),
        [
            "2025-06-13T00:00:00Z",
            "2025-06-20T00:00:00Z",
            "2025-06-27T00:00:00Z"
        ]
    );
}

#[test]
fn last_at_or_before_finds_the_latest_occurrence() {
    let line = CronLine::parse("* 3 * * *").unwrap();
    let tz = TimeZone::UTC;
    let last = last_at_or_before(&line, &tz, ts("2025-06-02T12:00:00Z"));
    assert_eq!(last, Some(ts("2025-06-02T03:59:00Z")));
    let yearly = CronLine::parse("@yearly").unwrap();
    let last = last_at_or_before(&yearly, &tz, ts("2025-06-02T12:00:00Z"));
    assert_eq!(last, Some(ts("2025-01-01T00:00:00Z")));
}
