pub mod capture;
pub mod log;
pub mod simulate;
pub mod simulate_suite;
pub mod space;
pub mod tune;
pub mod tune_report;
pub mod wisdom;
