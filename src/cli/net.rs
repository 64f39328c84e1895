//! `bwscope net serve` / `bwscope net run` arguments.

use clap::{Args, Subcommand, ValueEnum};

#[derive(Args, Debug, Clone)]
pub struct NetArgs {
    #[command(subcommand)]
    pub command: NetCommand,
}

#[derive(Subcommand, Debug, Clone)]
pub enum NetCommand {
    /// Be the transponder: answer leaders, one test at a time (a second leader is told "busy")
    Serve(NetServeArgs),
    /// Be the leader: measure against a transponder at HOST[:PORT]
    Run(NetRunArgs),
}

#[derive(Args, Debug, Clone)]
pub struct NetServeArgs {
    /// Address to listen on (default 127.0.0.1, this machine only; printed at start). Any other address needs --token-file, or --no-auth to serve without one
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<String>,
    /// TCP port (default 5280; 0 = any free port, printed at start)
    #[arg(long, short = 'p', value_name = "P")]
    pub port: Option<u16>,
    /// Exit after one leader run (the last point of its sweep, or a failed test)
    #[arg(long)]
    pub once: bool,
    /// Require leaders to prove they know the token in FILE (HMAC challenge; the token never crosses the wire)
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<String>,
    /// Serve a non-loopback --bind without a token: anyone who reaches the port may run tests up to --max-time and --max-bytes
    #[arg(long, conflicts_with = "token_file")]
    pub no_auth: bool,
    /// Longest test accepted, seconds (omit window included)
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub max_time: f64,
    /// Most bytes one test may move, e.g. 100GB
    #[arg(long, value_name = "SIZE", default_value = "1TiB")]
    pub max_bytes: String,
    /// Drop a peer that has not finished its handshake, or one frame, within this many seconds
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum NetModeArg {
    /// Request/answer per chunk (Z. Smith's `bandwidth` network test): latency-bound small, bandwidth-bound large
    Rr,
    /// Continuous writes for --time or --bytes, like iperf3
    Stream,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum NetDirectionArg {
    /// Leader to transponder
    Send,
    /// Transponder to leader
    Recv,
    /// Both at once
    Bidir,
}

#[derive(Args, Debug, Clone)]
pub struct NetRunArgs {
    /// The transponder: HOST, HOST:PORT, IP or [IPv6]:PORT
    #[arg(value_name = "HOST[:PORT]")]
    pub host: String,
    /// Port when HOST does not give one (default 5280)
    #[arg(long, short = 'p', value_name = "P")]
    pub port: Option<u16>,
    /// rr = request/answer sweep (as Z. Smith's `bandwidth`), stream = continuous like iperf3
    #[arg(long, short = 'm', value_enum, default_value = "rr")]
    pub mode: NetModeArg,
    /// Which way the bytes go, seen from the leader
    #[arg(long, short = 'd', value_enum, default_value = "send")]
    pub direction: NetDirectionArg,
    /// Parallel TCP connections, each on its own thread at both ends
    #[arg(long, short = 'P', value_name = "N", default_value_t = 1)]
    pub streams: u32,
    /// Chunk sizes (rr: one request; stream: one write): list or range (default rr 1KiB..64MiB:x4, stream 128KiB)
    #[arg(long, short = 's', value_name = "SIZES")]
    pub chunk: Option<String>,
    /// Measured seconds per point after the omit window (default rr 1, stream 5)
    #[arg(long, short = 't', value_name = "SECS")]
    pub time: Option<f64>,
    /// Bytes per point instead of a duration, e.g. 1GiB (all streams together)
    #[arg(long, short = 'n', value_name = "SIZE", conflicts_with = "time")]
    pub bytes: Option<String>,
    /// Seconds excluded at the start of each point (TCP slow start) (default rr 0.2, stream 1, 0 with --bytes)
    #[arg(long, short = 'O', value_name = "SECS")]
    pub omit: Option<f64>,
    /// Sample interval in milliseconds (stream: receive meter; rr: batch of rounds)
    #[arg(long, value_name = "MS", default_value_t = 100)]
    pub interval_ms: u32,
    /// Token file shared with the transponder's --token-file
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<String>,
    /// Connect timeout and the longest wait for the transponder, seconds
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,
    #[command(flatten)]
    pub output: crate::cli::OutputArgs,
}
