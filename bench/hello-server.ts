/** Baseline (b): a NestJS + Express JSON hello-world, the cost of the framework alone. */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

@Controller()
class HelloController {
  @Get('hello')
  hello() {
    return { hello: 'world' };
  }
}

@Module({ controllers: [HelloController] })
class HelloModule {}

const app = await NestFactory.create(HelloModule, { logger: false });
await app.listen(Number(process.argv[2]), '127.0.0.1');
process.stdout.write('ready\n');
