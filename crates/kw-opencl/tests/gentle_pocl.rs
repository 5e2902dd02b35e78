//! Shared mode (`kw_core::backend::set_gentle`, what `kw tune --max-share` turns on): every
//! transfer cut into pieces moves the same bytes as one transfer. Its own test binary, since
//! the mode is process-wide. Prints `SKIPPED: no OpenCL platform` where there is none.

use kw_core::backend::{set_gentle, Backend, BackendError};
use kw_core::buffer::DeviceBuffer;
use kw_opencl::OpenClBackend;

#[test]
fn transfers_in_pieces_move_the_same_bytes() {
    let d = match OpenClBackend.open(0) {
        Ok(d) => d,
        Err(e @ BackendError::Unavailable { .. }) => {
            eprintln!("SKIPPED: no OpenCL platform ({e})");
            return;
        }
        Err(e) => panic!("opening OpenCL device 0 failed: {e}"),
    };
    // 10 bytes: pieces that end inside an element, and a last piece shorter than the rest.
    set_gentle(10);
    let data: Vec<i32> = (0..1001).map(|i| i * 13 - 4000).collect();
    let a = DeviceBuffer::from_slice(d.as_ref(), &data).unwrap();
    assert_eq!(a.to_vec().unwrap(), data);
    let b = DeviceBuffer::<i32>::new(d.as_ref(), 1001).unwrap();
    b.copy_from(&a).unwrap();
    assert_eq!(b.to_vec().unwrap(), data);
    b.write_at(995, &[1, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(&b.to_vec().unwrap()[994..], &[data[994], 1, 2, 3, 4, 5, 6]);
    assert!(matches!(
        b.write_at(1000, &[1, 2]).unwrap_err(),
        BackendError::OutOfRange { .. }
    ));
    b.memory().fill_zero().unwrap();
    assert!(b.to_vec().unwrap().iter().all(|&v| v == 0));
    set_gentle(0);
    assert_eq!(a.to_vec().unwrap(), data);
}
