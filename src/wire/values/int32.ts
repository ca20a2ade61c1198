/** The range of .NET's Int32, every `int` member's type. */
export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
