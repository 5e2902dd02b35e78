pub mod capture;
pub mod space;
