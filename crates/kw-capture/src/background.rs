//! A background thread that writes captures while the application goes on.

use crate::buffer::CaptureBuffer;
use crate::error::{CaptureError, Result};
use crate::options::WriteOptions;
use crate::writer::{CaptureWriter, WrittenCapture};
use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// One capture to write: everything is owned, so submitting it moves no bytes.
#[derive(Debug, Clone)]
pub struct CaptureJob {
    /// Directory to write into.
    pub dir: PathBuf,
    /// File stem (sanitised by the writer); see [`crate::capture_file_stem`].
    pub file_stem: String,
    /// The caller's metadata.
    pub metadata: serde_json::Value,
    /// The buffers (moved in).
    pub buffers: Vec<CaptureBuffer>,
}

#[derive(Default)]
struct State {
    pending: usize,
    results: Vec<Result<WrittenCapture>>,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

/// Writes [`CaptureJob`]s on a background thread, in submission order.
///
/// [`submit`](Self::submit) only moves the job into a channel: the calling thread pays for
/// nothing but the device-to-host copies it already made. [`flush`](Self::flush) waits for
/// every submitted job and returns their results. Dropping the writer flushes too, and reports
/// the errors of jobs nobody collected on standard error; applications should call `flush`
/// before they exit (or keep the writer in a static that an explicit
/// `flush_captures()` drains), because statics are not dropped at process exit.
pub struct BackgroundWriter {
    tx: Option<Sender<CaptureJob>>,
    thread: Option<JoinHandle<()>>,
    shared: Shared,
}

impl BackgroundWriter {
    /// Starts the writer thread with these options.
    pub fn new(options: WriteOptions) -> std::io::Result<Self> {
        Self::with_notify(options, |_| {})
    }

    /// Starts the writer thread; `notify` is called on that thread with each job's result
    /// as soon as the job is written (or failed), e.g. to report it.
    pub fn with_notify(
        options: WriteOptions,
        notify: impl Fn(&Result<WrittenCapture>) + Send + 'static,
    ) -> std::io::Result<Self> {
        let (tx, rx) = channel::<CaptureJob>();
        let shared: Shared = Arc::default();
        let thread_shared = Arc::clone(&shared);
        let writer = CaptureWriter::new(options);
        let thread = std::thread::Builder::new()
            .name("kw-capture-writer".to_string())
            .spawn(move || {
                for job in rx {
                    let target = job.dir.join(&job.file_stem);
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        writer.write(&job.dir, &job.file_stem, &job.metadata, &job.buffers)
                    }))
                    .unwrap_or_else(|_| {
                        Err(CaptureError::WriterStopped {
                            path: target,
                            detail: "the writer panicked on this job".to_string(),
                        })
                    });
                    drop(job);
                    notify(&r);
                    let (lock, cv) = &*thread_shared;
                    let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
                    s.results.push(r);
                    s.pending -= 1;
                    cv.notify_all();
                }
            })?;
        Ok(BackgroundWriter {
            tx: Some(tx),
            thread: Some(thread),
            shared,
        })
    }

    /// Queues a job and returns at once. If the writer thread is gone, the job's failure is
    /// reported by the next [`flush`](Self::flush).
    pub fn submit(&self, job: CaptureJob) {
        let (lock, _) = &*self.shared;
        lock.lock().unwrap_or_else(|p| p.into_inner()).pending += 1;
        let sent = match &self.tx {
            Some(tx) => tx.send(job).map_err(|e| e.0),
            None => Err(job),
        };
        if let Err(job) = sent {
            let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
            s.pending -= 1;
            s.results.push(Err(CaptureError::WriterStopped {
                path: job.dir.join(&job.file_stem),
                detail: "the writer thread is not running".to_string(),
            }));
        }
    }

    /// Jobs submitted and not yet written.
    pub fn pending(&self) -> usize {
        self.shared
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pending
    }

    /// Waits until every submitted job is written (or failed) and returns the results of the
    /// jobs finished since the last flush, in submission order.
    pub fn flush(&self) -> Vec<Result<WrittenCapture>> {
        let (lock, cv) = &*self.shared;
        let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
        while s.pending > 0 {
            if self.thread.as_ref().is_none_or(|t| t.is_finished()) {
                break; // the thread died: nothing will come
            }
            // Time out now and then so that a thread that died unexpectedly cannot hang us.
            s = cv
                .wait_timeout(s, std::time::Duration::from_millis(200))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        std::mem::take(&mut s.results)
    }
}

impl Drop for BackgroundWriter {
    fn drop(&mut self) {
        self.tx = None; // close the channel: the thread ends after the queued jobs
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let s = self.shared.0.lock().unwrap_or_else(|p| p.into_inner());
        for r in &s.results {
            if let Err(e) = r {
                kw_core::diag::error(&format!("capture not written: {e}"));
            }
        }
    }
}
