pub mod capture;
pub mod log;
pub mod simulate;
pub mod space;
pub mod wisdom;
