var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
/** Baseline (b): a NestJS + Express JSON hello-world, the cost of the framework alone. */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
let HelloController = class HelloController {
    hello() {
        return { hello: 'world' };
    }
};
__decorate([
    Get('hello'),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", []),
    __metadata("design:returntype", void 0)
], HelloController.prototype, "hello", null);
HelloController = __decorate([
    Controller()
], HelloController);
let HelloModule = class HelloModule {
};
HelloModule = __decorate([
    Module({ controllers: [HelloController] })
], HelloModule);
const app = await NestFactory.create(HelloModule, { logger: false });
await app.listen(Number(process.argv[2]), '127.0.0.1');
process.stdout.write('ready\n');
