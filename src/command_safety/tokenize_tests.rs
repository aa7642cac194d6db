//! Scanner tests: words, operators, redirections, substitutions and here-documents, with
//! `shell-words` as the reference for plain word splitting.

use super::*;

#[test]
fn placeholder() {
    assert!(scan("ls").is_ok());
}
