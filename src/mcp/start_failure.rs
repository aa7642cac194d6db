//! Why a server's start failed at one step, typed; `connect` completes the message with the
//! server's command or URL and its stderr, and the run reports it (exit 6 for a required
//! server, `McpError::Startup`).

/// One step of opening a server that failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartFailure {
    #[error("\"{0}\" is not a valid HTTP header name")]
    HeaderName(String),
    #[error("the value of header \"{0}\" is not a valid HTTP header value")]
    HeaderValue(String),
    #[error("the URL is not valid: {0}")]
    Url(#[source] <reqwest::Url as std::str::FromStr>::Err),
    #[error("the URL has no host")]
    NoHost,
    #[error("the URL has no port")]
    NoPort,
    /// Nothing listened at the URL's host and port until the startup timeout.
    #[error(
        "nothing accepted a connection at {host}:{port} ({why}); tried {attempts} times over \
         {seconds:.1} s, until the server's startup_timeout"
    )]
    NotListening {
        host: String,
        port: u16,
        why: String,
        attempts: u32,
        seconds: f64,
    },
    #[error("could not set up the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The MCP initialization failed (in the SDK's error, put in words).
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    #[error("listing its tools failed: {0}")]
    ListTools(String),
    #[error("no answer to the handshake and tool listing within {0} ms")]
    NoAnswer(u128),
}
