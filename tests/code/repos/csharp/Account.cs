using System;
using Bank.Core;

namespace Bank
{
    /// <summary>A bank account.</summary>
    public class Account : IAccount
    {
        public decimal Balance { get; private set; }

        public Account() { }

        public void Deposit(decimal amount)
        {
            Balance += Validate(amount);
        }

        private decimal Validate(decimal amount)
        {
            return Math.Max(amount, 0);
        }
    }

    public interface IAccount
    {
        void Deposit(decimal amount);
    }
}
