//! Fuzz target: an OpenAI chat-completions SSE body, cut into arbitrary pieces, through the
//! real decoder, dialect and assembler (`cn_run::provider::fuzz::decode_openai`).
//!
//! Input layout: the first byte `n` (mod 8) is the number of cut sizes, the next `n` bytes
//! are the sizes, the rest is the body. Besides "no panic, no hang", the answer must not
//! depend on where the body was cut: the network decides that, not the server.
#![no_main]

use cn_run::provider::fuzz::{decode_openai, split_cuts};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((sizes, body)) = split_cuts(data) else {
        return;
    };
    let cut = decode_openai(body, &sizes).map_err(|e| e.to_string());
    let whole = decode_openai(body, &[]).map_err(|e| e.to_string());
    assert_eq!(cut, whole, "the answer depends on the cuts {sizes:?}");
});
