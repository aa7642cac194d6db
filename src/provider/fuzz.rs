//! Entry points for the fuzz targets in `fuzz/` (hidden from the docs; not an API).
//!
//! The SSE decoders are private to the providers. These functions run a response body
//! through exactly the code a real stream goes through — the SSE decoder, the provider's
//! dialect and the assembler — with the body cut into pieces of the given sizes, as a
//! network would deliver it, so a fuzzer can look for panics, hangs, unbounded memory and
//! answers that depend on where the body was cut.

use std::collections::VecDeque;

use super::collect::assemble::Assembler;
use super::sse::http::{BodyDecoder, Dialect};
use super::{AssistantTurn, ProviderError, anthropic, openai};

/// Decodes an OpenAI chat-completions stream body cut into `chunk_sizes` pieces (the rest
/// of the body is one last piece; a size of 0 sends an empty piece).
pub fn decode_openai(body: &[u8], chunk_sizes: &[usize]) -> Result<AssistantTurn, ProviderError> {
    decode(openai::fuzz_dialect(), body, chunk_sizes)
}

/// Decodes an Anthropic Messages stream body cut into `chunk_sizes` pieces.
pub fn decode_anthropic(
    body: &[u8],
    chunk_sizes: &[usize],
) -> Result<AssistantTurn, ProviderError> {
    decode(anthropic::fuzz_dialect(), body, chunk_sizes)
}

/// The fuzz targets' input layout: the first byte `n` (mod 8) is the number of cut sizes,
/// the next `n` bytes are the sizes, the rest is the body. `None` for an empty input.
pub fn split_cuts(data: &[u8]) -> Option<(Vec<usize>, &[u8])> {
    let (&n, rest) = data.split_first()?;
    let n = usize::from(n % 8).min(rest.len());
    let (sizes, body) = rest.split_at(n);
    Some((sizes.iter().map(|&s| usize::from(s)).collect(), body))
}

fn decode(
    dialect: impl Dialect,
    body: &[u8],
    chunk_sizes: &[usize],
) -> Result<AssistantTurn, ProviderError> {
    let mut decoder = BodyDecoder::new(dialect);
    let mut assembler = Assembler::default();
    let mut events = VecDeque::new();
    let mut rest = body;
    let sizes = chunk_sizes
        .iter()
        .copied()
        .chain(std::iter::once(body.len()));
    for size in sizes {
        let (piece, tail) = rest.split_at(size.min(rest.len()));
        rest = tail;
        let done = decoder.feed(Some(piece), &mut events)?;
        for event in events.drain(..) {
            assembler.push(event)?;
        }
        if done {
            return Ok(assembler.finish());
        }
    }
    decoder.feed(None, &mut events)?;
    for event in events.drain(..) {
        assembler.push(event)?;
    }
    Ok(assembler.finish())
}
