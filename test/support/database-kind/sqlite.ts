// Jest setup file of the `sqlite` project (jest.all.config.js): the e2e suites run on a SQLite file.
process.env.OAM_TEST_DB = 'sqlite';
