import { Get, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { AvailableSkill } from '../skills/skill.js';
import { SkillsService } from '../skills/skills.service.js';
import { AdminAction, OwnView, type AdminRequest } from './admin-auth.guard.js';
import { SkillListDto, type SkillDto } from './admin-responses.dto.js';
import { AdminRoutes } from './admin-routes.decorator.js';

/** Agent Skills (issue 40): the skills a user can use (the console's list), and re-reading the operator's folders. */
@AdminRoutes('admin/skills', 'skills')
export class AdminSkillsController {
  constructor(private readonly skills: SkillsService) {}

  @Get()
  @OwnView()
  @AdminAction('admin.skills_read')
  @ApiOperation({ summary: 'The skills the caller can use (the operator’s folders their groups allow, then the MCP servers’), as the agent lists them' })
  @ApiOkResponse({ type: SkillListDto })
  async list(@Req() req: AdminRequest): Promise<SkillListDto> {
    const { user, email, groups } = req.caller!;
    return { skills: (await this.skills.forCaller({ user, email: email ?? null, groups })).map(skillDto) };
  }

  @Post('reload')
  @HttpCode(200)
  @AdminAction('admin.skills_reload')
  @ApiOperation({ summary: 'Re-reads the operator’s skill folders now (they are also watched); a skipped skill is logged with why' })
  @ApiOkResponse({ type: SkillListDto })
  async reload(): Promise<SkillListDto> {
    await this.skills.operator.reload();
    return {
      skills: this.skills.operator.all.map((skill) => ({ name: skill.name, description: skill.description, origin: 'operator', allow_groups: skill.groups, files: skill.files })),
    };
  }
}

const skillDto = (skill: AvailableSkill): SkillDto => ({ name: skill.name, description: skill.description, origin: skill.origin, allow_groups: skill.groups, files: skill.files });
