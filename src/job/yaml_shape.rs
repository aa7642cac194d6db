//! Checks of a job file's YAML that the value parser cannot make, done on the parser's
//! events before anything else reads the file: a key given twice in one mapping (the
//! second silently replaced the first: a second `permissions:` dropped the first's
//! `exclude`), and nesting deeper than [`MAX_DEPTH`] (stopped at once, so a file of 100,000
//! nested brackets costs one pass up to the limit, not time that grows with its square).

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, Span};

use super::error::Problem;
use super::load::problem;
use super::locate::Pos;

/// Deepest nesting of mappings and sequences a job file may have.
pub(super) const MAX_DEPTH: usize = 64;

enum Frame {
    /// Keys seen (with their line) and whether the next scalar is a key.
    Map {
        seen: HashMap<String, usize>,
        at_key: bool,
        key: String,
    },
    Seq,
}

fn pos(span: &Span) -> Pos {
    Pos {
        line: span.start.line(),
        column: span.start.col() + 1,
    }
}

fn deep(label: &str, at: Pos, field: &str) -> Problem {
    problem(
        label,
        Some(at),
        field,
        format!("nested deeper than {MAX_DEPTH} levels; a job file is never that deep"),
    )
}

/// The dotted path of the keys open at this point (for the problem's field).
fn path(stack: &[Frame]) -> String {
    stack
        .iter()
        .filter_map(|f| match f {
            Frame::Map { key, .. } if !key.is_empty() => Some(key.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Problems with duplicate keys and nesting depth; empty when there are none (syntax
/// errors are left to the value parser, which words them).
pub(super) fn check(text: &str, label: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    for item in Parser::new_from_str(text) {
        let (event, span) = match item {
            Ok(pair) => pair,
            // The scanner has its own limit on flow nesting and stops there.
            Err(e) if e.info().contains("recursion limit") => {
                let at = Pos {
                    line: e.marker().line(),
                    column: e.marker().col() + 1,
                };
                problems.push(deep(label, at, &path(&stack)));
                return problems;
            }
            // Syntax errors are worded by the value parser.
            Err(_) => break,
        };
        let starts = matches!(event, Event::MappingStart(..) | Event::SequenceStart(..));
        let is_map = matches!(event, Event::MappingStart(..));
        // A value (scalar, alias or collection) after a key: the next scalar is a key again.
        let key_done = match stack.last_mut() {
            Some(Frame::Map { at_key, .. }) if !*at_key => {
                *at_key = true;
                true
            }
            _ => false,
        };
        match &event {
            Event::Scalar(value, ..) if !key_done => {
                if let Some(Frame::Map {
                    seen, at_key, key, ..
                }) = stack.last_mut()
                    && *at_key
                {
                    *at_key = false;
                    *key = value.to_string();
                    let line = span.start.line();
                    if let Some(first) = seen.insert(value.to_string(), line) {
                        let field = path(&stack);
                        problems.push(problem(
                            label,
                            Some(pos(&span)),
                            &field,
                            format!(
                                "duplicate key `{value}` (first given on line {first}); a key may appear once per mapping"
                            ),
                        ));
                    }
                }
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
            }
            _ => {}
        }
        if starts {
            if stack.len() >= MAX_DEPTH {
                problems.push(deep(label, pos(&span), &path(&stack)));
                return problems;
            }
            stack.push(if is_map {
                Frame::Map {
                    seen: HashMap::new(),
                    at_key: true,
                    key: String::new(),
                }
            } else {
                Frame::Seq
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<(usize, String)> {
        check(text, "job.yaml")
            .into_iter()
            .map(|p| (p.line, p.message))
            .collect()
    }

    #[test]
    fn duplicate_keys_are_located_at_every_level() {
        let text =
            "name: a\npermissions:\n  exclude: [Bash]\nprompt: x\npermissions:\n  allow: [Bash]\n";
        let found = lines(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, 5);
        assert!(found[0].1.contains("`permissions`") && found[0].1.contains("line 2"));
        let nested = "model:\n  name: a\n  name: b\n";
        assert_eq!(lines(nested)[0].0, 3);
        let flow = "limits: {max_turns: 1, max_turns: 2}\n";
        assert_eq!(lines(flow).len(), 1);
        let in_list = "checks:\n  - {name: a, run: x, run: y}\n";
        assert_eq!(lines(in_list).len(), 1);
        let quoted = "name: a\n\"name\": b\n";
        assert_eq!(lines(quoted).len(), 1);
    }

    #[test]
    fn same_key_in_sibling_mappings_and_values_equal_to_keys_are_fine() {
        let text = "checks:\n  - {name: a, run: name}\n  - {name: b, run: x}\nname: name\nrules: [name, name]\n";
        assert!(lines(text).is_empty(), "{:?}", lines(text));
        let nested = "a: {b: {c: 1}, d: {c: 2}}\ne: [{c: 1}, {c: 2}]\n";
        assert!(lines(nested).is_empty(), "{:?}", lines(nested));
    }

    #[test]
    fn deep_nesting_stops_at_the_limit() {
        let deep = format!("prompt: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let found = check(&deep, "job.yaml");
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("nested deeper"));
        assert_eq!(found[0].line, 1);
        let maps = format!("a: {}1{}\n", "{b: ".repeat(500), "}".repeat(500));
        assert!(
            check(&maps, "j")
                .iter()
                .any(|p| p.message.contains("nested deeper"))
        );
        let fine = format!(
            "a: {}1{}\n",
            "[".repeat(MAX_DEPTH - 2),
            "]".repeat(MAX_DEPTH - 2)
        );
        assert!(check(&fine, "j").is_empty());
    }
}
