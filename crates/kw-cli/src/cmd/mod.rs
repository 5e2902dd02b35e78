pub mod log;
pub mod simulate;
pub mod space;
