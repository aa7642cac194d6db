//! Waiting for an HTTP server that is not listening yet (a CI service container still
//! starting): connect to its port with growing pauses until it accepts or the server's
//! startup timeout runs out, so a slow start is not a failed run.

use std::time::{Duration, Instant};

use super::start_failure::StartFailure;

/// The first pause between attempts; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_secs(1);

/// Returns once something accepts TCP connections at `url`'s host and port, or says why
/// nothing did before `deadline`.
pub(crate) async fn wait_for_listener(url: &str, deadline: Instant) -> Result<(), StartFailure> {
    let parsed = reqwest::Url::parse(url).map_err(StartFailure::Url)?;
    let host = parsed
        .host_str()
        .ok_or(StartFailure::NoHost)?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = parsed.port_or_known_default().ok_or(StartFailure::NoPort)?;
    let started = Instant::now();
    let mut pause = FIRST_PAUSE;
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let left = deadline.saturating_duration_since(Instant::now());
        let attempt = tokio::time::timeout(
            left.max(Duration::from_millis(1)),
            tokio::net::TcpStream::connect((host.as_str(), port)),
        )
        .await;
        let why = match attempt {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(e)) => io_words(&e),
            Err(_) => "no answer to the connection".to_owned(),
        };
        if Instant::now() + pause >= deadline {
            return Err(StartFailure::NotListening {
                host,
                port,
                why,
                attempts,
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

fn io_words(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
        std::io::ErrorKind::TimedOut => "the connection timed out".to_owned(),
        _ => e.to_string(),
    }
}
