use super::*;

fn bits(field: Field, text: &str) -> Vec<u32> {
    let v = parse(field, text).unwrap_or_else(|e| panic!("{text}: {e}"));
    (0..64).filter(|i| v.bits & (1 << i) != 0).collect()
}

fn why(field: Field, text: &str) -> String {
    parse(field, text).expect_err(text).0
}

#[test]
fn numbers_names_ranges_steps_and_stars_in_lists() {
    assert_eq!(bits(Field::Minute, "*/15"), [0, 15, 30, 45]);
    assert_eq!(bits(Field::Minute, "1-10/4,59"), [1, 5, 9, 59]);
    assert_eq!(bits(Field::Minute, "*/100"), [0]);
    assert_eq!(bits(Field::Hour, "005"), [5]);
    assert_eq!(bits(Field::Month, "jan-Mar,DEC"), [1, 2, 3, 12]);
    assert_eq!(bits(Field::Month, "JAN-DEC/3"), [1, 4, 7, 10]);
    assert_eq!(bits(Field::DayOfWeek, "MON-FRI/2"), [1, 3, 5]);
    // 7 is Sunday, like 0.
    assert_eq!(bits(Field::DayOfWeek, "5-7"), [0, 5, 6]);
    assert_eq!(bits(Field::DayOfWeek, "*/2"), [0, 2, 4, 6]);
    assert_eq!(bits(Field::DayOfMonth, "*,10").len(), 31);
    assert!(parse(Field::DayOfMonth, "*,10").unwrap().star_first);
    assert!(!parse(Field::DayOfMonth, "10,*").unwrap().star_first);
    assert!(parse(Field::DayOfMonth, "*/2").unwrap().star_first);
}

#[test]
fn names_in_the_wrong_field_are_named() {
    let w = why(Field::Month, "MON");
    assert!(
        w.contains("`MON` is a day of the week; months are 1-12 or JAN-DEC"),
        "{w}"
    );
    let w = why(Field::DayOfWeek, "jan");
    assert!(w.contains("`jan` is a month; days of the week are"), "{w}");
    let w = why(Field::Minute, "MON");
    assert!(
        w.contains("`MON` is a day of the week; minutes are 0-59"),
        "{w}"
    );
    let w = why(Field::DayOfWeek, "Monday");
    assert!(w.contains("`Monday` is not a value"), "{w}");
}

#[test]
fn empty_items_out_of_range_and_backwards_ranges_are_refused_with_the_reason() {
    for text in [",", "1,,2", "1,", ",5"] {
        assert!(
            why(Field::Minute, text).contains("empty list item"),
            "{text}"
        );
    }
    assert!(why(Field::Minute, "60").contains("60 is out of range; minutes are 0-59"));
    assert!(why(Field::Hour, "4294967296").contains("out of range"));
    assert!(why(Field::DayOfWeek, "8").contains("0-7"));
    let w = why(Field::Minute, "50-10");
    assert!(
        w.contains("runs backwards") && w.contains("`50-59,0-10`"),
        "{w}"
    );
    let w = why(Field::DayOfWeek, "SAT-SUN");
    assert!(w.contains("`6,0`"), "{w}");
    assert!(why(Field::Minute, "*/0").contains("step of 0"));
    assert!(why(Field::Minute, "5/15").contains("a step needs a range"));
    assert!(why(Field::Minute, "*/").contains("missing its step"));
    assert!(why(Field::Minute, "*-5").contains("`*` stands alone"));
    assert!(why(Field::Minute, "1-2-3").contains("two values around one `-`"));
    assert!(why(Field::Minute, "*/2/3").contains("must be a number"));
    assert!(why(Field::Minute, "5-").contains("missing a value"));
    assert!(why(Field::Minute, "+5").contains("`+`"));
}

#[test]
fn other_dialects_extensions_are_refused_by_name() {
    for (field, text, word) in [
        (Field::DayOfMonth, "L", "`L`"),
        (Field::DayOfMonth, "LW", "`L`"),
        (Field::DayOfWeek, "5L", "`L`"),
        (Field::DayOfMonth, "15W", "`W`"),
        (Field::DayOfWeek, "5#2", "`#`"),
        (Field::DayOfWeek, "FRI#1", "`#`"),
        (Field::DayOfMonth, "?", "`?`"),
        (Field::DayOfWeek, "?", "`?`"),
        (Field::DayOfWeek, "+MON", "`+`"),
    ] {
        let w = why(field, text);
        assert!(
            w.contains(word) && w.contains("not part of this dialect"),
            "{text}: {w}"
        );
    }
    assert!(why(Field::DayOfWeek, "5#2").contains("read `5#2` as `5`"));
    // Names that hold those letters are names.
    assert_eq!(bits(Field::Month, "JUL"), [7]);
    assert_eq!(bits(Field::DayOfWeek, "WED"), [3]);
}
