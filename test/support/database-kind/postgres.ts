// Jest setup file of the `postgres` project (jest.all.config.js): the e2e suites run on PostgreSQL.
process.env.OAM_TEST_DB = 'postgres';
