//! The async runtime a command runs in: one thread for a lone run, worker threads for
//! several runs or the scheduler.

use crate::exit_code::Status;

/// Which runtime a command gets.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runtime {
    /// One run: every task on this thread. The run mostly waits on the model, tools and
    /// files (heavy work goes to blocking threads), and a reply handed between threads
    /// costs a wake-up on another core each time.
    Lone,
    /// Several runs at once, or the scheduler: worker threads on every core.
    Shared,
}

pub(crate) fn block_on(runtime: Runtime, fut: impl std::future::Future<Output = i32>) -> i32 {
    let built = match runtime {
        Runtime::Lone => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        Runtime::Shared => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    };
    match built {
        Ok(rt) => {
            let code = rt.block_on(fut);
            // Everything the run waits for has finished by now; a blocking task still
            // running (a cancelled tool stuck reading a pipe or a hung file system) must
            // not hold the exit, which dropping the runtime would.
            rt.shutdown_background();
            code
        }
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            Status::InternalError.exit_code()
        }
    }
}
