//! The unified diff the Edit, MultiEdit and Write tools show the model after a change.
//!
//! Line-based, three lines of context, `--- path` / `+++ path` headers, and the usual
//! `\ No newline at end of file` marker. The diff algorithm gets a time budget so that a
//! pathological pair of huge files cannot stall a tool call; past the budget the diff is
//! still correct, just less minimal.

use std::time::Duration;

use similar::TextDiff;

/// Unified diff of `old` → `new` for the file `path`; empty when they are equal.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    TextDiff::configure()
        .timeout(Duration::from_secs(2))
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(path, path)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_three_lines_of_context_around_a_change() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        let diff = unified_diff("src/a.txt", old, new);
        let expected =
            "--- src/a.txt\n+++ src/a.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n";
        assert_eq!(diff, expected);
        assert_eq!(unified_diff("a", old, old), "");
    }
}
