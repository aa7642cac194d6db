use super::*;

fn port(line: &str) -> Result<String, String> {
    portable(&CronLine::parse(line).unwrap()).map_err(|e| e.to_string())
}

#[test]
fn lines_every_target_reads_alike_are_kept_as_written() {
    for line in [
        "0 3 * * 1",
        "*/15 9-17 * * MON-FRI",
        "0 0 1,15 * 5",
        "30 2 * jan-jun *",
        "0 0 */2 * *",
        "0 0 * * */2",
        "5 4 1-31/2 * 1",
    ] {
        assert_eq!(port(line).unwrap(), line, "{line}");
    }
}

#[test]
fn readings_that_differ_are_written_out() {
    // Star-first day fields: Debian's AND, with one field every day.
    assert_eq!(port("0 0 */1 * 1").unwrap(), "0 0 * * 1");
    assert_eq!(port("0 0 *,10 * 2").unwrap(), "0 0 * * 2");
    assert_eq!(port("0 0 1 * */1").unwrap(), "0 0 1 * *");
    // A day field that is every day, read "either": every day.
    assert_eq!(port("0 0 1-31 * 1").unwrap(), "0 0 * * *");
    // Day of week 7, a star in a list, a step past the range.
    assert_eq!(port("0 0 * * 5-7").unwrap(), "0 0 * * 0,5,6");
    assert_eq!(port("0 0 1 * 7").unwrap(), "0 0 1 * 0");
    assert_eq!(port("*,5 * * * *").unwrap(), "* * * * *");
    assert_eq!(port("*/100 * * * *").unwrap(), "0 * * * *");
    assert_eq!(port("*/20,7 1-3 * * *").unwrap(), "0,7,20,40 1-3 * * *");
    assert_eq!(port("0-59/20,7 1-3 * * *").unwrap(), "0-59/20,7 1-3 * * *");
}

#[test]
fn days_that_must_match_two_restricted_fields_cannot_be_exported() {
    for line in ["0 0 */2 * 1", "0 0 1-15 * */2", "0 0 */3 JAN 2"] {
        let why = port(line);
        assert!(
            why.as_ref().is_err_and(|w| w.contains("both day fields")),
            "{line}: {why:?}"
        );
    }
    // `*,10` is every day of the month, so the day of week alone decides.
    assert!(port("0 0 *,10 * 2").is_ok());
}
