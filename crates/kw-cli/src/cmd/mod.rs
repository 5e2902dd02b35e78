pub mod capture;
pub mod space;
pub mod wisdom;
