//! Without a CUDA driver the backend answers `Unavailable`, never panics; with one, it
//! lists devices. Runs everywhere.

use kw_core::backend::{Backend, BackendError};
use kw_core::device::BackendKind;
use kw_cuda::CudaBackend;

#[test]
fn the_backend_reports_a_missing_driver_as_unavailable() {
    let backend = CudaBackend::new();
    assert_eq!(backend.kind(), BackendKind::Cuda);
    match backend.devices() {
        Ok(devices) => {
            println!("CUDA driver present: {} device(s)", devices.len());
            for d in &devices {
                println!("  {}", d.summary());
            }
            assert_eq!(backend.is_available(), !devices.is_empty());
        }
        Err(BackendError::Unavailable { backend: b, reason }) => {
            println!("SKIPPED: no CUDA driver ({reason})");
            assert_eq!(b, BackendKind::Cuda);
            assert!(
                reason.contains("no CUDA driver") || reason.contains("no usable CUDA driver"),
                "{reason}"
            );
            // Asking again answers the same, still without panicking.
            assert!(matches!(
                backend.open(0),
                Err(BackendError::Unavailable { .. })
            ));
            assert!(!backend.is_available());
            assert!(kw_cuda::nvrtc_library().is_err());
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
}
